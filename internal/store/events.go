package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/paygate/paygate/internal/store/dbconn"
	"github.com/paygate/paygate/internal/webhook"
)

// InsertEvent stores an event with its body (webhook.Record, which fans it
// out in the same transaction).
func (t *Tx) InsertEvent(ctx context.Context, e webhook.Event, body []byte) error {
	_, err := t.tx.ExecContext(dbconn.Deferred(t.stmtCtx(ctx)), `INSERT INTO events (id, access_key_id, type, resource_type, resource_id, body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, e.ID, e.AccessKeyID, e.Type, e.ResourceType, e.ResourceID, string(body), micros(e.CreatedAt))
	return err
}

const eventColumns = `id, access_key_id, type, resource_type, resource_id, body, created_at`

func scanEvent(row interface{ Scan(...any) error }) (*webhook.StoredEvent, error) {
	var (
		e       webhook.StoredEvent
		body    string
		created int64
	)
	err := row.Scan(&e.ID, &e.AccessKeyID, &e.Type, &e.ResourceType, &e.ResourceID, &body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	e.Body, e.CreatedAt = []byte(body), fromMicros(created)
	return &e, err
}

// FindEvent finds an event by id, whatever key owns it.
func (q Queries) FindEvent(ctx context.Context, id string) (*webhook.StoredEvent, error) {
	return scanEvent(q.q.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1`, id))
}

// FindEventForKey finds a key's event; another key's is ErrNotFound.
func (q Queries) FindEventForKey(ctx context.Context, keyID, id string) (*webhook.StoredEvent, error) {
	return scanEvent(q.q.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1 AND access_key_id = $2`, id, keyID))
}

// ListEvents returns up to f.Limit of the key's events matching f.
func (q Queries) ListEvents(ctx context.Context, keyID string, f webhook.EventFilter) ([]*webhook.StoredEvent, error) {
	where, args := []string{"access_key_id = $1"}, []any{keyID}
	add := func(cond string, vs ...any) {
		for _, v := range vs {
			args = append(args, v)
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1)
		}
		where = append(where, cond)
	}
	if f.Type != "" {
		add("type = ?", f.Type)
	}
	if f.ResourceID != "" {
		add("resource_id = ?", f.ResourceID)
	}
	order := "DESC"
	if f.AfterCreated != nil {
		c := micros(*f.AfterCreated)
		add("(created_at, id) < (?, ?)", c, f.AfterID)
	}
	if f.SinceCreated != nil {
		c := micros(*f.SinceCreated)
		add("(created_at, id) > (?, ?)", c, f.SinceID)
		order = "ASC"
	}
	args = append(args, f.Limit)
	rows, err := q.q.QueryContext(ctx, fmt.Sprintf(`SELECT %s FROM events WHERE %s ORDER BY created_at %s, id %s LIMIT $%d`,
		eventColumns, strings.Join(where, " AND "), order, order, len(args)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*webhook.StoredEvent
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
