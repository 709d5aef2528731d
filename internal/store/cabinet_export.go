package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
)

// paymentWhere is the WHERE clause of a key's payments matching f, with its
// arguments: the list (ListPayments), the export (EachPaymentPage) and the
// totals (PaymentTotals) select exactly the same payments. The keyset
// bound (AfterCreated, AfterID) is included when set.
func paymentWhere(keyID string, f payment.Filter) (string, []any) {
	where, args := paymentConds(keyID, f)
	return strings.Join(where, " AND "), args
}

// paymentConds are paymentWhere's conditions, the key's first ($1).
func paymentConds(keyID string, f payment.Filter) ([]string, []any) {
	where, args := []string{"access_key_id = $1"}, []any{keyID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.CreatedGTE != nil {
		add("created_at >= ?", micros(*f.CreatedGTE))
	}
	if f.CreatedLT != nil {
		add("created_at < ?", micros(*f.CreatedLT))
	}
	if f.OrderID != "" {
		add("order_id = ?", f.OrderID)
	}
	if f.CustomerReference != "" {
		add("customer_reference = ?", f.CustomerReference)
	}
	if f.Search != "" {
		add("(id = ? OR order_id = ? OR customer_reference = ?)", f.Search)
	}
	if f.AfterCreated != nil {
		args = append(args, micros(*f.AfterCreated), f.AfterID)
		n := len(args)
		// created_at <= bound is implied by the row comparison; it is the
		// part every index range can start from, so both databases seek to
		// the page instead of reading every newer entry (docs/benchmarks.md,
		// "Cabinet payments page").
		where = append(where, fmt.Sprintf("created_at <= $%d AND (created_at, id) < ($%d, $%d)", n-1, n-1, n))
	}
	return where, args
}

// EachPaymentPage calls fn with every payment of the key matching f (its
// keyset bound and Limit ignored), newest first like ListPayments, a page
// of at most size payments at a time: each page is its own query, bounded
// by the (created_at, id) of the previous page's last payment, so memory
// does not grow with the number of payments and no transaction is held
// open while fn writes (the export, docs/design/decisions.md section 13).
// A payment created during the walk is newer than the first page and is
// not included; fn's error stops the walk and is returned.
func (q Queries) EachPaymentPage(ctx context.Context, keyID string, f payment.Filter, size int,
	fn func(page []*payment.Payment) error) error {
	f.AfterCreated, f.AfterID, f.Limit = nil, "", size
	for {
		page, err := q.ListPayments(ctx, keyID, f)
		if err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if len(page) < size {
			return nil
		}
		last := page[len(page)-1]
		at := last.CreatedAt
		f.AfterCreated, f.AfterID = &at, last.ID
	}
}

// SucceededStatuses are the statuses whose payments count as succeeded in
// the totals: the money was captured (a refund later does not undo that).
var SucceededStatuses = []payment.Status{payment.Succeeded, payment.PartiallyRefunded, payment.Refunded}

// PaymentTotals sums the key's payments matching f (keyset bound and Limit
// ignored) per currency, ordered by currency, in one GROUP BY. It reads
// the stored status: a session past its expiry that no job has expired
// yet is counted as neither succeeded nor declined, as it is once expired.
func (q Queries) PaymentTotals(ctx context.Context, keyID string, f payment.Filter) ([]payment.CurrencyTotals, error) {
	f.AfterCreated, f.AfterID = nil, ""
	where, args := paymentWhere(keyID, f)
	succeeded := make([]string, len(SucceededStatuses))
	for i, s := range SucceededStatuses {
		succeeded[i] = "'" + string(s) + "'"
	}
	in := "status IN (" + strings.Join(succeeded, ", ") + ")"
	// Each amount is added as its high and low 32 bits (division and
	// remainder truncate alike on both databases): either part's sum fits
	// an int64 for up to 2^31 rows, where a SUM of the amounts overflows
	// with two of 2^63-1 (an error on both databases). money.SumOfParts
	// joins them exactly (docs/api.md, "Amounts and totals").
	parts := func(expr string) string {
		return `CAST(COALESCE(SUM(` + expr + ` / 4294967296), 0) AS BIGINT),
		CAST(COALESCE(SUM(` + expr + ` % 4294967296), 0) AS BIGINT)`
	}
	rows, err := q.q.QueryContext(ctx, `SELECT currency, COUNT(*),
		CAST(COALESCE(SUM(CASE WHEN `+in+` THEN 1 ELSE 0 END), 0) AS BIGINT),
		`+parts(`CASE WHEN `+in+` THEN amount_minor ELSE 0 END`)+`,
		`+parts(`captured_amount_minor`)+`,
		`+parts(`refunded_amount_minor`)+`,
		CAST(COALESCE(SUM(CASE WHEN status = 'declined' THEN 1 ELSE 0 END), 0) AS BIGINT)
		FROM payments WHERE `+where+` GROUP BY currency ORDER BY currency`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []payment.CurrencyTotals{}
	for rows.Next() {
		var (
			t                                            payment.CurrencyTotals
			succHi, succLo, captHi, captLo, refHi, refLo int64
		)
		if err := rows.Scan(&t.Currency, &t.Count, &t.SucceededCount, &succHi, &succLo, &captHi, &captLo,
			&refHi, &refLo, &t.DeclinedCount); err != nil {
			return nil, err
		}
		t.SucceededMinor = money.SumOfParts(succHi, succLo)
		t.CapturedMinor = money.SumOfParts(captHi, captLo)
		t.RefundedMinor = money.SumOfParts(refHi, refLo)
		out = append(out, t)
	}
	return out, rows.Err()
}
