package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/reconcile"
)

// paygateMovements reads the money movements Paygate recorded on a
// provider account's channels, by the time their operations ended: a pay
// operation that charged or held, a capture, a refund, a cancel's release,
// a payout's transfer (docs/design/decisions.md section 18). A payment
// finished by a confirm (a one-time code) is its pay operation's charge,
// as the acquirer keys it.
const paygateMovements = `
SELECT o.id, o.kind, o.result, o.amount_minor, o.updated_at, p.id, p.access_key_id, p.currency, p.amount_minor
FROM operations o JOIN payments p ON p.id = o.resource_id JOIN channels c ON c.id = p.channel_id
WHERE o.resource = 'payment' AND c.provider = $1 AND o.state = 'done' AND o.updated_at >= $2 AND o.updated_at < $3
  AND ((o.kind = 'pay' AND o.result IN ('succeeded', 'authorized')) OR (o.kind IN ('capture', 'refund') AND o.result = 'succeeded')
       OR (o.kind = 'cancel' AND o.result IN ('canceled', 'succeeded')))
UNION ALL
SELECT (SELECT f.id FROM operations f WHERE f.resource = 'payment' AND f.resource_id = p.id AND f.kind = 'pay'
        AND f.result <> 'rerouted' ORDER BY f.created_at DESC LIMIT 1),
       'pay', o.result, p.amount_minor, o.updated_at, p.id, p.access_key_id, p.currency, p.amount_minor
FROM operations o JOIN payments p ON p.id = o.resource_id JOIN channels c ON c.id = p.channel_id
WHERE o.resource = 'payment' AND c.provider = $1 AND o.state = 'done' AND o.updated_at >= $2 AND o.updated_at < $3
  AND o.kind = 'confirm' AND o.result IN ('succeeded', 'authorized')
UNION ALL
SELECT o.id, o.kind, o.result, o.amount_minor, o.updated_at, po.id, po.access_key_id, po.currency, po.amount_minor
FROM operations o JOIN payouts po ON po.id = o.resource_id JOIN channels c ON c.id = po.channel_id
WHERE o.resource = 'payout' AND c.provider = $1 AND o.state = 'done' AND o.updated_at >= $2 AND o.updated_at < $3
  AND o.kind = 'create' AND o.result = 'succeeded'`

// PaygateMovements implements reconcile.Store.
func (q Queries) PaygateMovements(ctx context.Context, providerName string, from, to time.Time, fn func(reconcile.Movement) error) error {
	rows, err := q.q.QueryContext(ctx, paygateMovements, providerName, micros(from), micros(to))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			m                   reconcile.Movement
			kind, result        string
			opAmount, payAmount int64
			at                  int64
		)
		if err := rows.Scan(&m.Key, &kind, &result, &opAmount, &at, &m.PaymentID, &m.AccessKeyID, &m.Currency, &payAmount); err != nil {
			return err
		}
		m.At, m.AmountMinor = fromMicros(at), opAmount
		switch {
		case kind == "pay" && result == "authorized":
			m.Kind = provider.MoveHold
		case kind == "pay" || kind == "confirm":
			m.Kind = provider.MoveCharge
		case kind == "capture":
			m.Kind = provider.MoveCapture
		case kind == "refund":
			m.Kind = provider.MoveRefund
		case kind == "cancel":
			m.Kind, m.AmountMinor = provider.MoveRelease, payAmount
		case kind == "create":
			m.Kind = provider.MoveTransfer
		}
		if m.AmountMinor == 0 {
			m.AmountMinor = payAmount
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return rows.Err()
}

func dayText(day time.Time) string { return day.UTC().Format(time.DateOnly) }

// BeginReconciliation implements reconcile.Store: the day's row is claimed
// in one statement, unless a run holds it since after staleBefore.
func (q Queries) BeginReconciliation(ctx context.Context, providerName string, day, now, staleBefore time.Time) (bool, error) {
	res, err := q.q.ExecContext(ctx, `INSERT INTO reconciliation_runs (provider, day, status, started_at)
		VALUES ($1, $2, 'running', $3)
		ON CONFLICT (provider, day) DO UPDATE SET status = 'running', started_at = excluded.started_at
		WHERE reconciliation_runs.status <> 'running' OR reconciliation_runs.started_at < $4`,
		providerName, dayText(day), micros(now), micros(staleBefore))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AbandonReconciliation implements reconcile.Store.
func (q Queries) AbandonReconciliation(ctx context.Context, providerName string, day time.Time) error {
	_, err := q.q.ExecContext(ctx, `UPDATE reconciliation_runs SET status = 'failed' WHERE provider = $1 AND day = $2 AND status = 'running'`,
		providerName, dayText(day))
	return err
}

// FinishReconciliation implements reconcile.Store: the day's breaks
// replaced and its counts written, in one transaction.
func (s *Store) FinishReconciliation(ctx context.Context, r reconcile.Result, now time.Time) error {
	day := dayText(r.Day)
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.q.ExecContext(ctx, `DELETE FROM reconciliation_breaks WHERE provider = $1 AND day = $2`, r.Provider, day); err != nil {
			return err
		}
		for i, b := range r.Breaks {
			var pg, pv reconcile.Side
			if b.Paygate != nil {
				pg = *b.Paygate
			}
			if b.Provider != nil {
				pv = *b.Provider
			}
			if _, err := tx.q.ExecContext(ctx, `INSERT INTO reconciliation_breaks (provider, day, seq, kind, operation_id,
				payment_id, access_key_id, paygate_kind, paygate_amount, paygate_currency, paygate_at, provider_kind,
				provider_amount, provider_currency, provider_at, provider_ref)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
				r.Provider, day, i+1, b.Kind, b.Key, b.PaymentID, b.AccessKeyID,
				nullText(b.Paygate != nil, pg.Kind), nullAmount(b.Paygate != nil, pg.AmountMinor), nullText(b.Paygate != nil, pg.Currency),
				nullTime(b.Paygate != nil, pg.At), nullText(b.Provider != nil, pv.Kind), nullAmount(b.Provider != nil, pv.AmountMinor),
				nullText(b.Provider != nil, pv.Currency), nullTime(b.Provider != nil, pv.At), nullText(b.Provider != nil, pv.Ref)); err != nil {
				return err
			}
		}
		_, err := tx.q.ExecContext(ctx, `UPDATE reconciliation_runs SET status = 'done', finished_at = $3, paygate_count = $4,
			provider_count = $5, matched = $6, pending = $7, breaks = $8, fees_minor = $9 WHERE provider = $1 AND day = $2`,
			r.Provider, day, micros(now), r.Paygate, r.AtProvider, r.Matched, r.Pending, len(r.Breaks), r.FeesMinor)
		return err
	})
}

// ReconciliationBreaks reads a stored day's breaks, in order.
func (q Queries) ReconciliationBreaks(ctx context.Context, providerName string, day time.Time) ([]reconcile.Break, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT kind, operation_id, payment_id, access_key_id, paygate_kind, paygate_amount,
		paygate_currency, paygate_at, provider_kind, provider_amount, provider_currency, provider_at, provider_ref
		FROM reconciliation_breaks WHERE provider = $1 AND day = $2 ORDER BY seq`, providerName, dayText(day))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []reconcile.Break
	for rows.Next() {
		var (
			b                     reconcile.Break
			pgKind, pgCur, pvKind sql.NullString
			pvCur, pvRef          sql.NullString
			pgAmt, pgAt, pvAmt    sql.NullInt64
			pvAt                  sql.NullInt64
		)
		if err := rows.Scan(&b.Kind, &b.Key, &b.PaymentID, &b.AccessKeyID, &pgKind, &pgAmt, &pgCur, &pgAt,
			&pvKind, &pvAmt, &pvCur, &pvAt, &pvRef); err != nil {
			return nil, err
		}
		if pgKind.Valid {
			b.Paygate = &reconcile.Side{Kind: pgKind.String, AmountMinor: pgAmt.Int64, Currency: pgCur.String, At: fromMicros(pgAt.Int64)}
		}
		if pvKind.Valid {
			b.Provider = &reconcile.Side{Kind: pvKind.String, AmountMinor: pvAmt.Int64, Currency: pvCur.String,
				At: fromMicros(pvAt.Int64), Ref: pvRef.String}
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

func nullText(ok bool, s string) sql.NullString { return sql.NullString{String: s, Valid: ok} }
func nullAmount(ok bool, n int64) sql.NullInt64 { return sql.NullInt64{Int64: n, Valid: ok} }
func nullTime(ok bool, t time.Time) sql.NullInt64 {
	return sql.NullInt64{Int64: micros(t), Valid: ok}
}

// ReconciliationDone reports whether an account's day has a finished run.
func (q Queries) ReconciliationDone(ctx context.Context, providerName string, day time.Time) (bool, error) {
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM reconciliation_runs WHERE provider = $1 AND day = $2 AND status = 'done'`,
		providerName, dayText(day)).Scan(&n)
	return n > 0, err
}

// ReconcilableAccounts lists the enabled stored provider accounts.
func (q Queries) ReconcilableAccounts(ctx context.Context) ([]string, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT name FROM provider_accounts WHERE status = 'enabled' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
