package openapi

// Limit is one allowance of the calling key in one currency, with the
// current UTC day's figures (schema Limit; docs/design/decisions.md section
// 12). An unset limit is null.
type Limit struct {
	Allowance           string `json:"allowance"`
	Currency            string `json:"currency"`
	PerTransactionMinor *int64 `json:"per_transaction_minor"`
	DailyMinor          *int64 `json:"daily_minor"`
	UsedMinor           int64  `json:"used_minor"`
	ReservedMinor       int64  `json:"reserved_minor"`
	RemainingMinor      *int64 `json:"remaining_minor"`
	ResetsAt            Time   `json:"resets_at"`
}

// LimitList is the answer of listLimits (GET /limits) (schema LimitList).
// Items is never null.
type LimitList struct {
	Items []Limit `json:"items"`
}
