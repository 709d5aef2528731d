package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/reconcile"
)

// stagePaygate stages the money movements Paygate recorded on a provider
// account's channels, by the time their operations ended: a pay operation
// that charged or held, a capture, a refund, a cancel's release, a
// payout's transfer (docs/design/decisions.md section 18). A payment
// finished by a confirm (a one-time code) is its pay operation's charge,
// as the acquirer keys it. $1 the account, [$2, $3) the times, $4 the day;
// the kinds compared follow.
const stagePaygate = `
INSERT INTO reconciliation_staged (provider, day, match_key, side, operation_id, payment_id, access_key_id, kind,
	amount_minor, currency, at, ref, payment_ref, fee_minor)
SELECT $1, $4, m.op, 0, m.op, m.pid, m.akid, m.kind, m.amount, m.currency, m.at, '', m.pref, 0 FROM (
	SELECT o.id AS op,
	       CASE WHEN o.kind = 'pay' AND o.result = 'authorized' THEN 'hold' WHEN o.kind = 'pay' THEN 'charge'
	            WHEN o.kind = 'cancel' THEN 'release' ELSE o.kind END AS kind,
	       CASE WHEN o.kind = 'cancel' OR o.amount_minor = 0 THEN p.amount_minor ELSE o.amount_minor END AS amount,
	       p.currency AS currency, o.updated_at AS at, p.id AS pid, p.access_key_id AS akid, p.provider_payment_id AS pref
	FROM operations o JOIN payments p ON p.id = o.resource_id JOIN channels c ON c.id = p.channel_id
	WHERE o.resource = 'payment' AND c.provider = $1 AND o.state = 'done' AND o.updated_at >= $2 AND o.updated_at < $3
	  AND ((o.kind = 'pay' AND o.result IN ('succeeded', 'authorized')) OR (o.kind IN ('capture', 'refund') AND o.result = 'succeeded')
	       OR (o.kind = 'cancel' AND o.result IN ('canceled', 'succeeded')))
	UNION ALL
	SELECT (SELECT f.id FROM operations f WHERE f.resource = 'payment' AND f.resource_id = p.id AND f.kind = 'pay'
	        AND f.result <> 'rerouted' ORDER BY f.created_at DESC LIMIT 1),
	       CASE WHEN o.result = 'authorized' THEN 'hold' ELSE 'charge' END,
	       p.amount_minor, p.currency, o.updated_at, p.id, p.access_key_id, p.provider_payment_id
	FROM operations o JOIN payments p ON p.id = o.resource_id JOIN channels c ON c.id = p.channel_id
	WHERE o.resource = 'payment' AND c.provider = $1 AND o.state = 'done' AND o.updated_at >= $2 AND o.updated_at < $3
	  AND o.kind = 'confirm' AND o.result IN ('succeeded', 'authorized')
	UNION ALL
	SELECT o.id, 'transfer', CASE WHEN o.amount_minor = 0 THEN po.amount_minor ELSE o.amount_minor END,
	       po.currency, o.updated_at, po.id, po.access_key_id, po.provider_payout_id
	FROM operations o JOIN payouts po ON po.id = o.resource_id JOIN channels c ON c.id = po.channel_id
	WHERE o.resource = 'payout' AND c.provider = $1 AND o.state = 'done' AND o.updated_at >= $2 AND o.updated_at < $3
	  AND o.kind = 'create' AND o.result = 'succeeded'
) m WHERE m.op IS NOT NULL`

// ClearStaged implements reconcile.Store: every earlier run's rows of the
// day (their stages are the day and a token).
func (q Queries) ClearStaged(ctx context.Context, c reconcile.Claim) error {
	lo, hi := dayText(c.Day)+"@", dayText(c.Day)+"A" // '@' < digits < 'A'
	for _, table := range []string{"reconciliation_staged", "reconciliation_staged_breaks"} {
		if _, err := q.q.ExecContext(ctx, `DELETE FROM `+table+` WHERE provider = $1 AND day > $2 AND day < $3`,
			c.Provider, lo, hi); err != nil {
			return err
		}
	}
	return nil
}

// clearStage deletes one run's staged rows.
func (q Queries) clearStage(ctx context.Context, c reconcile.Claim) error {
	for _, table := range []string{"reconciliation_staged", "reconciliation_staged_breaks"} {
		if _, err := q.q.ExecContext(ctx, `DELETE FROM `+table+` WHERE provider = $1 AND day = $2`, c.Provider, c.Stage()); err != nil {
			return err
		}
	}
	return nil
}

// StagePaygate implements reconcile.Store: one statement, the rows never
// leave the database.
func (q Queries) StagePaygate(ctx context.Context, c reconcile.Claim, from, to time.Time, kinds []string) (int, error) {
	if len(kinds) == 0 {
		return 0, nil
	}
	query := stagePaygate
	if q.dialect == SQLite {
		// Without statistics SQLite would take the resource's index and read
		// every payment operation ever made, each hour of the window: the
		// time range bounds the read to the day (docs/benchmarks.md).
		query = strings.ReplaceAll(query, "FROM operations o JOIN", "FROM operations o INDEXED BY operations_updated JOIN")
	}
	query += ` AND m.kind IN (`
	args := []any{c.Provider, micros(from), micros(to), c.Stage()}
	for i, k := range kinds {
		if i > 0 {
			query += ", "
		}
		args = append(args, k)
		query += fmt.Sprintf("$%d", len(args))
	}
	res, err := q.q.ExecContext(ctx, query+")", args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// StageProvider implements reconcile.Store, rowsPerStatement rows a
// statement. A movement without an operation id is keyed by its place in
// the run (seq, the first one's), so that it is compared alone unless
// MatchStaged finds it Paygate's.
func (q Queries) StageProvider(ctx context.Context, c reconcile.Claim, seq int, ms []provider.Movement) error {
	for len(ms) > rowsPerStatement {
		if err := q.StageProvider(ctx, c, seq, ms[:rowsPerStatement]); err != nil {
			return err
		}
		ms, seq = ms[rowsPerStatement:], seq+rowsPerStatement
	}
	if len(ms) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO reconciliation_staged (provider, day, match_key, side, operation_id, payment_id, access_key_id,
		kind, amount_minor, currency, at, ref, payment_ref, fee_minor) VALUES `)
	args := make([]any, 0, 14*len(ms))
	d := c.Stage()
	for i, m := range ms {
		key := m.OperationID
		if key == "" {
			key = fmt.Sprintf("\x01%d", seq+i) // no operation id starts so
		}
		if i > 0 {
			b.WriteString(", ")
		}
		args = q.valuesRow(&b, args, c.Provider, d, key, 1, m.OperationID, "", "", m.Kind, m.AmountMinor, m.Currency,
			micros(m.At), m.Ref, m.PaymentRef, m.FeeMinor)
	}
	_, err := q.q.ExecContext(ctx, b.String(), args...)
	return err
}

// valuesRow writes a row of a multi-row INSERT's VALUES, a placeholder a
// value, and appends the values to args: numbered for PostgreSQL,
// anonymous for SQLite, whose driver binds a numbered parameter by
// looking its name up in a list, so that a statement of P of them costs
// P² (a thousand staged rows, 9,000 parameters, took 120 ms of CPU;
// docs/benchmarks.md, "Reconciliation of a day of a million payments").
func (q Queries) valuesRow(b *strings.Builder, args []any, row ...any) []any {
	b.WriteByte('(')
	for i, v := range row {
		if i > 0 {
			b.WriteString(", ")
		}
		args = append(args, v)
		if q.dialect == SQLite {
			b.WriteByte('?')
		} else {
			fmt.Fprintf(b, "$%d", len(args))
		}
	}
	b.WriteByte(')')
	return args
}

// MatchStaged implements reconcile.Store: only a payment's one movement
// of the kind (two partial refunds: neither).
func (q Queries) MatchStaged(ctx context.Context, c reconcile.Claim) error {
	_, err := q.q.ExecContext(ctx, `UPDATE reconciliation_staged SET match_key = COALESCE((SELECT MIN(g.operation_id)
		FROM reconciliation_staged g WHERE g.provider = reconciliation_staged.provider AND g.day = reconciliation_staged.day
		AND g.side = 0 AND g.payment_ref = reconciliation_staged.payment_ref AND g.kind = reconciliation_staged.kind
		HAVING COUNT(*) = 1), match_key)
		WHERE provider = $1 AND day = $2 AND side = 1 AND operation_id = '' AND payment_ref <> ''`, c.Provider, c.Stage())
	return err
}

// stagedPage is how many staged rows StagedKeys reads at once.
const stagedPage = 5000

// StagedKeys implements reconcile.Store: pages of rows in key order (no
// cursor is held while fn runs: SQLite has one connection), each ending
// at a whole key.
func (q Queries) StagedKeys(ctx context.Context, c reconcile.Claim,
	fn func(ours []reconcile.Movement, theirs []provider.Movement) error) error {
	providerName := c.Provider
	const cols = `SELECT match_key, side, operation_id, payment_id, access_key_id, kind, amount_minor, currency, at, ref,
		payment_ref, fee_minor FROM reconciliation_staged WHERE provider = $1 AND day = $2`
	d := c.Stage()
	after := ""
	for {
		page, err := q.stagedRows(ctx, cols+` AND match_key > $3 ORDER BY match_key, side, at LIMIT $4`,
			providerName, d, after, stagedPage)
		if err != nil || len(page) == 0 {
			return err
		}
		if len(page) == stagedPage {
			last := page[len(page)-1].key
			cut := len(page)
			for cut > 0 && page[cut-1].key == last {
				cut--
			}
			if cut == 0 { // one key fills the page: read it whole
				if page, err = q.stagedRows(ctx, cols+` AND match_key = $3 ORDER BY side, at`, providerName, d, last); err != nil {
					return err
				}
			} else {
				page = page[:cut]
			}
		}
		for i := 0; i < len(page); {
			j := i
			var ours []reconcile.Movement
			var theirs []provider.Movement
			for ; j < len(page) && page[j].key == page[i].key; j++ {
				if page[j].ours != nil {
					ours = append(ours, *page[j].ours)
				} else {
					theirs = append(theirs, *page[j].theirs)
				}
			}
			if err := fn(ours, theirs); err != nil {
				return err
			}
			i = j
		}
		after = page[len(page)-1].key
	}
}

// stagedRow is one staged row: Paygate's movement or the acquirer's.
type stagedRow struct {
	key    string
	ours   *reconcile.Movement
	theirs *provider.Movement
}

func (q Queries) stagedRows(ctx context.Context, query string, args ...any) ([]stagedRow, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []stagedRow
	for rows.Next() {
		var (
			r                             stagedRow
			side                          int
			opID, payID, keyID, kind, cur string
			ref, payRef                   string
			amount, at, fee               int64
		)
		if err := rows.Scan(&r.key, &side, &opID, &payID, &keyID, &kind, &amount, &cur, &at, &ref, &payRef, &fee); err != nil {
			return nil, err
		}
		if side == 0 {
			r.ours = &reconcile.Movement{Key: opID, PaymentID: payID, AccessKeyID: keyID, PaymentRef: payRef,
				Side: reconcile.Side{Kind: kind, AmountMinor: amount, Currency: cur, At: fromMicros(at)}}
		} else {
			r.theirs = &provider.Movement{Kind: kind, OperationID: opID, Ref: ref, PaymentRef: payRef, AmountMinor: amount,
				Currency: cur, FeeMinor: fee, At: fromMicros(at)}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// StageBreaks implements reconcile.Store, rowsPerStatement rows a
// statement.
func (q Queries) StageBreaks(ctx context.Context, c reconcile.Claim, bs []reconcile.Break) error {
	for len(bs) > rowsPerStatement {
		if err := q.StageBreaks(ctx, c, bs[:rowsPerStatement]); err != nil {
			return err
		}
		bs = bs[rowsPerStatement:]
	}
	if len(bs) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO reconciliation_staged_breaks (provider, day, at, kind, operation_id, payment_id, access_key_id,
		paygate_kind, paygate_amount, paygate_currency, paygate_at, provider_kind, provider_amount, provider_currency,
		provider_at, provider_ref) VALUES `)
	args := make([]any, 0, 16*len(bs))
	d := c.Stage()
	for i, br := range bs {
		var pg, pv reconcile.Side
		if br.Paygate != nil {
			pg = *br.Paygate
		}
		if br.Provider != nil {
			pv = *br.Provider
		}
		at := pg.At
		if br.Paygate == nil {
			at = pv.At
		}
		if i > 0 {
			b.WriteString(", ")
		}
		args = q.valuesRow(&b, args, c.Provider, d, micros(at), br.Kind, br.Key, br.PaymentID, br.AccessKeyID,
			nullText(br.Paygate != nil, pg.Kind), nullAmount(br.Paygate != nil, pg.AmountMinor), nullText(br.Paygate != nil, pg.Currency),
			nullTime(br.Paygate != nil, pg.At), nullText(br.Provider != nil, pv.Kind), nullAmount(br.Provider != nil, pv.AmountMinor),
			nullText(br.Provider != nil, pv.Currency), nullTime(br.Provider != nil, pv.At), nullText(br.Provider != nil, pv.Ref))
	}
	_, err := q.q.ExecContext(ctx, b.String(), args...)
	return err
}

func dayText(day time.Time) string { return day.UTC().Format(time.DateOnly) }

// rowsPerStatement bounds a staging statement's rows (SQLite takes
// 32,766 parameters at most, PostgreSQL 65,535).
const rowsPerStatement = 500

// BeginReconciliation implements reconcile.Store: the day's row is claimed
// in one statement, unless a run holds it since after staleBefore.
func (q Queries) BeginReconciliation(ctx context.Context, c reconcile.Claim, staleBefore time.Time) (bool, error) {
	res, err := q.q.ExecContext(ctx, `INSERT INTO reconciliation_runs (provider, day, status, started_at)
		VALUES ($1, $2, 'running', $3)
		ON CONFLICT (provider, day) DO UPDATE SET status = 'running', started_at = excluded.started_at
		WHERE reconciliation_runs.status <> 'running' OR reconciliation_runs.started_at < $4`,
		c.Provider, dayText(c.Day), micros(c.Started), micros(staleBefore))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AbandonReconciliation implements reconcile.Store: the day's stored
// result stays as it was, the run's staged rows go, and the day is marked
// failed unless another run holds it now.
func (s *Store) AbandonReconciliation(ctx context.Context, c reconcile.Claim) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.q.ExecContext(ctx, `UPDATE reconciliation_runs SET status = 'failed'
			WHERE provider = $1 AND day = $2 AND status = 'running' AND started_at = $3`,
			c.Provider, dayText(c.Day), micros(c.Started)); err != nil {
			return err
		}
		return tx.clearStage(ctx, c)
	})
}

// FinishReconciliation implements reconcile.Store: the day's breaks
// replaced by the run's staged ones, in time order, its counts written and
// its staged rows deleted, in one transaction, if it still holds the day.
func (s *Store) FinishReconciliation(ctx context.Context, c reconcile.Claim, r reconcile.Result, now time.Time) error {
	day := dayText(c.Day)
	return s.InTx(ctx, func(tx *Tx) error {
		res, err := tx.q.ExecContext(ctx, `UPDATE reconciliation_runs SET status = 'done', finished_at = $4, paygate_count = $5,
			provider_count = $6, matched = $7, pending = $8, breaks = $9, fees_minor = $10
			WHERE provider = $1 AND day = $2 AND status = 'running' AND started_at = $3`,
			c.Provider, day, micros(c.Started), micros(now), r.Paygate, r.AtProvider, r.Matched, r.Pending, r.Breaks(), r.FeesMinor)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return cmp.Or(err, reconcile.ErrClaimLost)
		}
		if _, err := tx.q.ExecContext(ctx, `DELETE FROM reconciliation_breaks WHERE provider = $1 AND day = $2`, c.Provider, day); err != nil {
			return err
		}
		if _, err := tx.q.ExecContext(ctx, `INSERT INTO reconciliation_breaks (provider, day, seq, kind, operation_id,
			payment_id, access_key_id, paygate_kind, paygate_amount, paygate_currency, paygate_at, provider_kind,
			provider_amount, provider_currency, provider_at, provider_ref)
			SELECT provider, $3, ROW_NUMBER() OVER (ORDER BY at, operation_id, COALESCE(provider_ref, ''), kind), kind, operation_id,
			payment_id, access_key_id, paygate_kind, paygate_amount, paygate_currency, paygate_at, provider_kind,
			provider_amount, provider_currency, provider_at, provider_ref
			FROM reconciliation_staged_breaks WHERE provider = $1 AND day = $2`, c.Provider, c.Stage(), day); err != nil {
			return err
		}
		return tx.clearStage(ctx, c)
	})
}

// ReconciliationBreaks reads a stored day's breaks, in order.
func (q Queries) ReconciliationBreaks(ctx context.Context, providerName string, day time.Time) ([]reconcile.Break, error) {
	var out []reconcile.Break
	err := q.EachReconciliationBreak(ctx, providerName, day, func(b reconcile.Break) error {
		out = append(out, b)
		return nil
	})
	return out, err
}

// EachReconciliationBreak calls fn with a stored day's breaks, in order,
// a page at a time (no cursor held while fn runs).
func (q Queries) EachReconciliationBreak(ctx context.Context, providerName string, day time.Time, fn func(reconcile.Break) error) error {
	after := 0
	for {
		page, err := q.breaksPage(ctx, providerName, day, after)
		if err != nil || len(page) == 0 {
			return err
		}
		for _, b := range page {
			if err := fn(b); err != nil {
				return err
			}
		}
		after += len(page)
	}
}

// breaksPage reads the stored breaks after seq after, a page of them.
func (q Queries) breaksPage(ctx context.Context, providerName string, day time.Time, after int) ([]reconcile.Break, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT kind, operation_id, payment_id, access_key_id, paygate_kind, paygate_amount,
		paygate_currency, paygate_at, provider_kind, provider_amount, provider_currency, provider_at, provider_ref
		FROM reconciliation_breaks WHERE provider = $1 AND day = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
		providerName, dayText(day), after, stagedPage)
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
