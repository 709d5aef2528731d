package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
)

// checkedPaygate is one Paygate process a reliability check runs against, on a
// database of its own, with a client signed by the first key.
type checkedPaygate struct {
	*paygate
	spec   paygateSpec
	client *client.Client
	drop   func() // drops the PostgreSQL database; nil on SQLite
}

// startChecked builds the binary and starts serve on a fresh database (a
// new data folder under c.dir; a new PostgreSQL database when c.db says
// so) with spec's extra flags and environment.
func startChecked(ctx context.Context, c checkConfig, name string, spec paygateSpec) (*checkedPaygate, error) {
	bin, err := paygateBinary(ctx)
	if err != nil {
		return nil, err
	}
	spec.bin = bin
	if spec.dataDir, err = os.MkdirTemp(c.dir, name+"-"); err != nil {
		return nil, err
	}
	var drop func()
	if c.db == "postgres" {
		if spec.databaseURL, drop, err = freshPostgres(ctx); err != nil {
			return nil, err
		}
	}
	pg, err := startPaygate(ctx, spec)
	if err == nil && pg.access == "" {
		pg.kill()
		err = errNoKey
	}
	if err != nil {
		if drop != nil {
			drop()
		}
		return nil, err
	}
	return &checkedPaygate{paygate: pg, spec: spec, client: client.New(pg.url, pg.access, pg.secret), drop: drop}, nil
}

// close kills the process and drops its database.
func (p *checkedPaygate) close() {
	p.kill()
	if p.drop != nil {
		p.drop()
	}
}

// sqlitePath is the SQLite database file of an SQLite run.
func (p *checkedPaygate) sqlitePath() string { return filepath.Join(p.spec.dataDir, "paygate.db") }

// readAllPages reads every page of a list endpoint (payments, events): target
// is its path with any filters; the items are decoded into T.
func readAllPages[T any](ctx context.Context, cl *client.Client, target string) ([]T, error) {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	var all []T
	cursor := ""
	for range 10000 {
		page := struct {
			Items      []T     `json:"items"`
			NextCursor *string `json:"next_cursor"`
		}{}
		t := target + sep + "limit=100"
		if cursor != "" {
			t += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := cl.JSON(ctx, "GET", t, nil, &page); err != nil {
			return nil, fmt.Errorf("GET %s: %w", t, err)
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return all, nil
		}
		cursor = *page.NextCursor
	}
	return nil, fmt.Errorf("GET %s: too many pages", target)
}

// unsettledStatuses are the payment statuses that can still change on their own or
// with the payer's help.
var unsettledStatuses = []string{"created", "awaiting_payment_data", "processing", "requires_action", "authorized", "manual_review"}

// waitAllFinal polls until no payment of the key is in a status that can
// still change, or the deadline passes; it returns how many are left.
func waitAllFinal(ctx context.Context, cl *client.Client, within time.Duration) (int, error) {
	deadline := time.Now().Add(within)
	for {
		left := 0
		for _, st := range unsettledStatuses {
			var page openapi.PaymentList
			if err := cl.JSON(ctx, "GET", "/api/v1/payments?limit=100&status="+st, nil, &page); err != nil {
				return 0, err
			}
			left += len(page.Items)
		}
		if left == 0 || time.Now().After(deadline) {
			return left, nil
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return left, err
		}
	}
}

// directCard is a direct card payment's body. Visa needs the whole
// customer (docs/payments.md); every card gets it.
func directCard(order string, amount int64, number, cvv string) []byte {
	return []byte(fmt.Sprintf(`{"order_id":%q,"amount_minor":%d,"currency":"USD",`+
		`"customer":{"first_name":"Ada","last_name":"Soak","email":"ada@example.com","billing_address":{"country":"GB","line1":"1 Check St"}},`+
		`"payment_method":{"type":"card","card":{"number":%q,"expire_month":12,"expire_year":%d,"cvv":%q}}}`,
		order, amount, number, time.Now().Year()+2, cvv))
}
