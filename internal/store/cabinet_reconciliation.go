package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/paygate/paygate/internal/reconcile"
)

// What the cabinet's reconciliation pages read (docs/reconciliation.md,
// "In the cabinet"): the stored runs and breaks as one access key may see
// them. A run's own counts (movements, matched, pending, fees, every break)
// are the whole account's, which may serve other merchants' keys, so
// nothing here reads them: a key sees its own breaks, counted by kind, and
// the run's status and times. Read-only.

// KeyReconciledDay is one account's reconciled day as a key sees it.
type KeyReconciledDay struct {
	Account    string // the provider account (channels.provider)
	Day        string // YYYY-MM-DD, UTC
	Status     string // running, done or failed
	StartedAt  time.Time
	FinishedAt *time.Time
	// Breaks are the key's breaks of the run by kind (reconcile.BreakKinds);
	// a kind without one is absent.
	Breaks map[string]int
}

// KeyBreak is one of a key's stored breaks.
type KeyBreak struct {
	Seq int // its order in the run, from 1
	// Payout: PaymentID names a payout, not a payment.
	Payout bool
	reconcile.Break
}

// keyRuns selects the runs a key sees: those of an account one of its
// channels is on (assigned now), and those holding one of its breaks (an
// account its channel has since left).
const keyRuns = `SELECT r.provider, r.day, r.status, r.started_at, r.finished_at FROM reconciliation_runs r
	WHERE (EXISTS (SELECT 1 FROM key_channels kc JOIN channels c ON c.id = kc.channel_id
	               WHERE kc.access_key_id = $1 AND c.provider = r.provider)
	    OR EXISTS (SELECT 1 FROM reconciliation_breaks b
	               WHERE b.provider = r.provider AND b.day = r.day AND b.access_key_id = $1))`

// keyRunsCounted is a key's runs (the query runs, selecting r) with the
// key's breaks of each by kind: one row per run and kind, a run without a
// break of the key once with a NULL kind.
func keyRunsCounted(runs string) string {
	return `SELECT r.provider, r.day, r.status, r.started_at, r.finished_at, b.kind, COUNT(b.seq)
	FROM (` + runs + `) r LEFT JOIN reconciliation_breaks b
	  ON b.provider = r.provider AND b.day = r.day AND b.access_key_id = $1
	GROUP BY r.provider, r.day, r.status, r.started_at, r.finished_at, b.kind
	ORDER BY r.day DESC, r.provider, b.kind`
}

// KeyReconciledDays lists the runs keyID sees, newest day first, then by
// account, up to limit; after (a day and an account, both "" for the
// first page) is the last run of the previous page.
func (q Queries) KeyReconciledDays(ctx context.Context, keyID, afterDay, afterAccount string, limit int) ([]KeyReconciledDay, error) {
	runs, args := keyRuns, []any{keyID, limit}
	if afterDay != "" {
		runs += ` AND (r.day < $3 OR (r.day = $3 AND r.provider > $4))`
		args = append(args, afterDay, afterAccount)
	}
	runs += ` ORDER BY r.day DESC, r.provider LIMIT $2`
	return q.keyReconciledDays(ctx, keyRunsCounted(runs), args...)
}

// KeyReconciledDay is an account's day as keyID sees it; nil: no run, or
// not one keyID sees.
func (q Queries) KeyReconciledDay(ctx context.Context, keyID, account, day string) (*KeyReconciledDay, error) {
	days, err := q.keyReconciledDays(ctx, keyRunsCounted(keyRuns+` AND r.provider = $2 AND r.day = $3`), keyID, account, day)
	if err != nil || len(days) == 0 {
		return nil, err
	}
	return &days[0], nil
}

func (q Queries) keyReconciledDays(ctx context.Context, query string, args ...any) ([]KeyReconciledDay, error) {
	if args[0] == "" {
		return nil, nil // no key: an orphan's access_key_id
	}
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []KeyReconciledDay
	for rows.Next() {
		var (
			d        KeyReconciledDay
			started  int64
			finished sql.NullInt64
			kind     sql.NullString
			n        int
		)
		if err := rows.Scan(&d.Account, &d.Day, &d.Status, &started, &finished, &kind, &n); err != nil {
			return nil, err
		}
		if last := len(out) - 1; last < 0 || out[last].Account != d.Account || out[last].Day != d.Day {
			d.StartedAt = fromMicros(started)
			if finished.Valid {
				at := fromMicros(finished.Int64)
				d.FinishedAt = &at
			}
			d.Breaks = map[string]int{}
			out = append(out, d)
		}
		if kind.Valid {
			out[len(out)-1].Breaks[kind.String] = n
		}
	}
	return out, rows.Err()
}

// KeyBreaks reads keyID's breaks of an account's day in their order, those
// after seq afterSeq, up to limit. An orphan (a break of no key) is never
// one of them.
func (q Queries) KeyBreaks(ctx context.Context, keyID, account, day string, afterSeq, limit int) ([]KeyBreak, error) {
	if keyID == "" {
		return nil, nil // no key: an orphan's access_key_id
	}
	rows, err := q.q.QueryContext(ctx, `SELECT b.seq, b.kind, b.operation_id, b.payment_id, b.access_key_id,
		b.paygate_kind, b.paygate_amount, b.paygate_currency, b.paygate_at,
		b.provider_kind, b.provider_amount, b.provider_currency, b.provider_at, b.provider_ref,
		EXISTS (SELECT 1 FROM payouts po WHERE po.id = b.payment_id)
		FROM reconciliation_breaks b WHERE b.provider = $1 AND b.day = $2 AND b.access_key_id = $3 AND b.seq > $4
		ORDER BY b.seq LIMIT $5`, account, day, keyID, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []KeyBreak
	for rows.Next() {
		var (
			b                     KeyBreak
			pgKind, pgCur, pvKind sql.NullString
			pvCur, pvRef          sql.NullString
			pgAmt, pgAt, pvAmt    sql.NullInt64
			pvAt                  sql.NullInt64
		)
		if err := rows.Scan(&b.Seq, &b.Kind, &b.Key, &b.PaymentID, &b.AccessKeyID, &pgKind, &pgAmt, &pgCur, &pgAt,
			&pvKind, &pvAmt, &pvCur, &pvAt, &pvRef, &b.Payout); err != nil {
			return nil, err
		}
		if pgKind.Valid {
			b.Paygate = &reconcile.Side{Kind: pgKind.String, AmountMinor: pgAmt.Int64, Currency: pgCur.String,
				At: fromMicros(pgAt.Int64)}
		}
		if pvKind.Valid {
			b.Provider = &reconcile.Side{Kind: pvKind.String, AmountMinor: pvAmt.Int64, Currency: pvCur.String,
				At: fromMicros(pvAt.Int64), Ref: pvRef.String}
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
