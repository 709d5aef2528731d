package dbconn

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
)

// Listener is River's listener for PostgreSQL on a connection of its own,
// outside the pool: River's database/sql driver sends its notifications
// (a NOTIFY in the transaction that inserts a job) but cannot listen for
// them (docs/design/dependencies.md), so without it the workers would
// have to poll often. With it, a worker fetches a job as soon as the
// transaction that queued it commits, and polls only as a fallback
// (docs/operations.md, "Background jobs").
//
// River notifies at most once per queue per fetch cooldown (its insert
// limiter): a job queued just after a notified one, whose transaction
// commits after the fetch that notification triggered, would wait for the
// fallback poll. So for Linger after an insert notification, the listener
// repeats it every Poke: a busy queue is fetched at least that often, as
// the fixed poll did before, and an idle one is not.
type Listener struct {
	url    string
	schema string
	// Poke and Linger: a queue that had an insert notification less than
	// Linger ago is notified again every Poke. Zero: never.
	Poke, Linger time.Duration

	mu        sync.Mutex
	conn      *pgx.Conn
	afterConn string
	pokes     chan *riverdriver.Notification
	busy      map[string]time.Time // insert payload → its last notification
	ticking   bool
}

// NewListener returns a listener on the PostgreSQL database at
// databaseURL, for River's tables in schema (empty: the connection's
// current schema).
func NewListener(databaseURL, schema string) *Listener {
	return &Listener{url: databaseURL, schema: schema, pokes: make(chan *riverdriver.Notification, 16),
		busy: map[string]time.Time{}}
}

var _ riverdriver.Listener = (*Listener)(nil)

// Connect opens the listening connection.
func (l *Listener) Connect(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		return errors.New("dbconn: listener already connected")
	}
	conn, err := pgx.Connect(ctx, l.url)
	if err != nil {
		return err
	}
	if l.schema == "" {
		if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&l.schema); err != nil {
			_ = conn.Close(ctx)
			return err
		}
	}
	if l.afterConn != "" {
		if _, err := conn.Exec(ctx, l.afterConn); err != nil {
			_ = conn.Close(ctx)
			return err
		}
	}
	l.conn = conn
	return nil
}

// Close closes the connection.
func (l *Listener) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	err := l.conn.Close(ctx)
	l.conn = nil
	return err
}

// channel is the PostgreSQL channel of a River topic: River notifies on
// "<schema>.<topic>" (its PGNotifyMany).
func (l *Listener) channel(topic string) string {
	return pgx.Identifier{l.schema + "." + topic}.Sanitize()
}

// Listen starts listening on a topic.
func (l *Listener) Listen(ctx context.Context, topic string) error {
	return l.exec(ctx, "LISTEN "+l.channel(topic))
}

// Unlisten stops listening on a topic.
func (l *Listener) Unlisten(ctx context.Context, topic string) error {
	return l.exec(ctx, "UNLISTEN "+l.channel(topic))
}

func (l *Listener) exec(ctx context.Context, sql string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return errors.New("dbconn: listener not connected")
	}
	_, err := l.conn.Exec(ctx, sql)
	return err
}

// Ping checks the connection.
func (l *Listener) Ping(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return errors.New("dbconn: listener not connected")
	}
	return l.conn.Ping(ctx)
}

// Schema is the schema River's tables are in.
func (l *Listener) Schema() string { return l.schema }

// SetAfterConnectExec runs sql after each Connect (River's tests).
func (l *Listener) SetAfterConnectExec(sql string) { l.afterConn = sql }

// WaitForNotification waits for the next notification or poke, until ctx
// ends (River ends it to listen or unlisten: the connection stays usable).
func (l *Listener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	select {
	case n := <-l.pokes:
		return n, nil
	default:
	}
	l.mu.Lock()
	conn := l.conn
	l.mu.Unlock()
	if conn == nil {
		return nil, errors.New("dbconn: listener not connected")
	}
	// A poke due while the connection waits interrupts the wait.
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	waited := make(chan struct{})
	interrupted := make(chan *riverdriver.Notification, 1)
	go func() {
		select {
		case p := <-l.pokes:
			cancel()
			interrupted <- p
		case <-waited:
			interrupted <- nil
		case <-waitCtx.Done():
			interrupted <- nil
		}
	}()
	n, err := conn.WaitForNotification(waitCtx)
	close(waited)
	poke := <-interrupted
	if err != nil && poke != nil && ctx.Err() == nil {
		return poke, nil
	}
	if poke != nil { // both came: the poke goes out on the next wait
		l.poke(poke)
	}
	if err != nil {
		return nil, err
	}
	out := &riverdriver.Notification{Topic: strings.TrimPrefix(n.Channel, l.schema+"."), Payload: n.Payload}
	if out.Topic == insertTopic && l.Poke > 0 {
		l.sawInsert(out.Payload)
	}
	return out, nil
}

// insertTopic is River's topic of insert notifications.
const insertTopic = "river_insert"

// sawInsert marks a queue busy, and starts the pokes if they are not running.
func (l *Listener) sawInsert(payload string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.busy[payload] = time.Now()
	if l.ticking {
		return
	}
	l.ticking = true
	go l.tick()
}

// tick pokes the busy queues every Poke, and stops when none is.
func (l *Listener) tick() {
	t := time.NewTicker(l.Poke)
	defer t.Stop()
	for range t.C {
		l.mu.Lock()
		for payload, last := range l.busy {
			if time.Since(last) > l.Linger {
				delete(l.busy, payload)
				continue
			}
			l.poke(&riverdriver.Notification{Topic: insertTopic, Payload: payload})
		}
		if len(l.busy) == 0 || l.conn == nil {
			l.ticking = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

func (l *Listener) poke(n *riverdriver.Notification) {
	select {
	case l.pokes <- n:
	default: // pokes enough are waiting
	}
}
