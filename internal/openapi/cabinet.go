package openapi

import "github.com/paygate/paygate/internal/money"

// CurrencyTotals are the totals of a key's payments in one currency
// (getPaymentTotals (GET /cabinet/v1/payments/totals)).
type CurrencyTotals struct {
	Currency       string    `json:"currency"`
	Count          int64     `json:"count"`
	SucceededCount int64     `json:"succeeded_count"`
	SucceededMinor money.Sum `json:"succeeded_minor"`
	CapturedMinor  money.Sum `json:"captured_minor"`
	RefundedMinor  money.Sum `json:"refunded_minor"`
	DeclinedCount  int64     `json:"declined_count"`
}

// PaymentTotals is the answer of getPaymentTotals (GET
// /cabinet/v1/payments/totals): one item per currency, ordered by
// currency. Items is never null.
type PaymentTotals struct {
	Items []CurrencyTotals `json:"items"`
}
