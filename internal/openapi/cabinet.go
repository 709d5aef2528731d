package openapi

// CurrencyTotals are the totals of a key's payments in one currency
// (getPaymentTotals (GET /cabinet/v1/payments/totals)).
type CurrencyTotals struct {
	Currency       string `json:"currency"`
	Count          int64  `json:"count"`
	SucceededCount int64  `json:"succeeded_count"`
	SucceededMinor int64  `json:"succeeded_minor"`
	CapturedMinor  int64  `json:"captured_minor"`
	RefundedMinor  int64  `json:"refunded_minor"`
	DeclinedCount  int64  `json:"declined_count"`
}

// PaymentTotals is the answer of getPaymentTotals (GET
// /cabinet/v1/payments/totals): one item per currency, ordered by
// currency. Items is never null.
type PaymentTotals struct {
	Items []CurrencyTotals `json:"items"`
}
