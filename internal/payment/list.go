package payment

import "time"

// Filter selects a page of a key's payments, newest first: the list
// (listPayments (GET /api/v1/payments)), the export and the totals
// (docs/design/decisions.md section 13) select by it alike.
type Filter struct {
	Status            string
	CreatedGTE        *time.Time
	CreatedLT         *time.Time
	OrderID           string
	CustomerReference string
	// Search matches a payment id, order_id or customer_reference exactly
	// (the cabinet's one search box, docs/cabinet.md).
	Search string
	// After is the (created_at, id) of the last payment of the previous page.
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// CurrencyTotals are the totals of a key's payments in one currency
// (getPaymentTotals (GET /cabinet/v1/payments/totals)).
type CurrencyTotals struct {
	Currency string
	// Count is every matching payment, whatever its status.
	Count int64
	// SucceededCount and SucceededMinor are the payments whose money was
	// taken: status succeeded, partially_refunded or refunded, and the sum
	// of their amounts.
	SucceededCount, SucceededMinor int64
	// CapturedMinor and RefundedMinor sum captured_amount_minor and
	// refunded_amount_minor over every matching payment.
	CapturedMinor, RefundedMinor int64
	// DeclinedCount is the payments in status declined.
	DeclinedCount int64
}
