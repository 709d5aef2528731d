package allowance

import (
	"time"

	"github.com/paygate/paygate/internal/fault"
)

// The settings of an allowance, as named in a limit_exceeded fault's
// details.setting.
const (
	SettingPerTransaction = "per_transaction"
	SettingDaily          = "daily"
)

// Figures are an allowance as GET /api/v1/limits shows it
// (listLimits (GET /limits)) and as a limit_exceeded fault reports it.
type Figures struct {
	Setting
	Usage
	// RemainingMinor is the most one more transaction may be now: the
	// smaller of the per-transaction limit and what is left of the day; nil
	// when both are unset.
	RemainingMinor *int64
	ResetsAt       time.Time
}

// FiguresOf combines a setting with its day's usage at now.
func FiguresOf(s Setting, u Usage, now time.Time) Figures {
	f := Figures{Setting: s, Usage: u, ResetsAt: ResetsAt(now)}
	if s.DailyMinor != nil {
		left := max(*s.DailyMinor-u.UsedMinor-u.ReservedMinor, 0)
		f.RemainingMinor = &left
	}
	if p := s.PerTransactionMinor; p != nil && (f.RemainingMinor == nil || *p < *f.RemainingMinor) {
		v := *p
		f.RemainingMinor = &v
	}
	return f
}

// Exceeded is the 422 limit_exceeded fault of docs/design/decisions.md
// section 12: details name the allowance, the setting passed and its value
// (limit_minor), the day's figures and when the day resets. It carries no
// submitted value: the amount asked for is the client's own.
func Exceeded(s Setting, setting string, u Usage, now time.Time) *fault.Error {
	f := FiguresOf(s, u, now)
	limit := s.DailyMinor
	msg := "the amount would pass the daily " + string(s.Allowance) + " allowance of this key in this currency"
	if setting == SettingPerTransaction {
		limit = s.PerTransactionMinor
		msg = "the amount is over the per-transaction " + string(s.Allowance) + " allowance of this key in this currency"
	}
	var remaining any
	if f.RemainingMinor != nil {
		remaining = *f.RemainingMinor
	}
	return &fault.Error{Code: fault.LimitExceeded, Message: msg, Details: map[string]any{
		"allowance":       string(s.Allowance),
		"currency":        s.Currency,
		"setting":         setting,
		"limit_minor":     *limit,
		"used_minor":      u.UsedMinor,
		"reserved_minor":  u.ReservedMinor,
		"remaining_minor": remaining,
		"resets_at":       f.ResetsAt.Format(time.RFC3339),
	}}
}
