// Package allowance keeps the allowances of docs/design/decisions.md
// section 12: per access key and currency, a collection allowance (payments
// of every kind) and a payout allowance, each with an optional amount per
// transaction and per UTC day. An accepted resource reserves its amount;
// the reservation is consumed when it succeeds and released otherwise.
//
// The check and the reservation are one statement of the store
// (Tx.ReserveAllowance), so concurrent requests, in one process or several,
// can never together exceed a daily allowance.
package allowance

import (
	"context"
	"math"
	"time"
)

// Kind names one of a key's two allowances.
type Kind string

// The two allowances of docs/design/decisions.md section 12. They are
// independent: a payment never touches the payout allowance, nor a payout
// the collection one.
const (
	Collection Kind = "collection"
	Payout     Kind = "payout"
)

// Known reports whether k is one of the two allowances.
func Known(k Kind) bool { return k == Collection || k == Payout }

// Setting is one allowance of a key in one currency. A nil limit is unset:
// unlimited.
type Setting struct {
	KeyID               string
	Allowance           Kind
	Currency            string
	PerTransactionMinor *int64
	DailyMinor          *int64
	UpdatedAt           time.Time
}

// Usage is what a day of an allowance holds: amounts consumed (succeeded)
// and amounts reserved (accepted, outcome not yet known).
type Usage struct {
	UsedMinor     int64
	ReservedMinor int64
}

// Hold is what an accepted resource asks of an allowance.
type Hold struct {
	KeyID       string
	Allowance   Kind
	Currency    string
	AmountMinor int64
	// Resource and ResourceID name what holds the reservation ("payment",
	// its id): Settle finds it by them, once.
	Resource   string
	ResourceID string
	At         time.Time // the acceptance, by the key's clock: it decides the day
}

// Tx is what the allowance rules need of the request's transaction (the
// store's Tx).
type Tx interface {
	// FindAllowance returns the key's setting, or nil when none is set.
	FindAllowance(ctx context.Context, keyID string, a Kind, currency string) (*Setting, error)
	// ReserveAllowance adds h's amount to the reserved sum of its day in one
	// conditional statement, and records the reservation of h.Resource. With
	// a daily limit it adds nothing and answers false when used + reserved +
	// amount would pass it.
	ReserveAllowance(ctx context.Context, h Hold, day string, daily *int64) (bool, error)
	// AllowanceUsage returns the sums of one day (zero when nothing is held).
	AllowanceUsage(ctx context.Context, keyID string, a Kind, currency, day string) (Usage, error)
	// SettleAllowance ends the reservation of a resource, if it has one still
	// standing: consumedMinor of it becomes used, the rest is released. A
	// second call finds nothing standing and does nothing.
	SettleAllowance(ctx context.Context, resource, resourceID string, consumedMinor int64, at time.Time) error
}

// Day is the allowance day of t: its UTC calendar date.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// ResetsAt is when the day of t ends: the next UTC midnight.
func ResetsAt(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// Reserve checks h against the key's allowance and reserves its amount, in
// the caller's transaction: a 422 limit_exceeded fault when either setting
// would be passed, and then nothing is reserved. A key without a setting
// for this allowance and currency is unlimited and nothing is counted
// (docs/limits.md: counting starts when a setting is made).
func Reserve(ctx context.Context, tx Tx, h Hold) error {
	s, err := tx.FindAllowance(ctx, h.KeyID, h.Allowance, h.Currency)
	if err != nil || s == nil {
		return err
	}
	day := Day(h.At)
	if s.PerTransactionMinor != nil && h.AmountMinor > *s.PerTransactionMinor {
		u, err := tx.AllowanceUsage(ctx, h.KeyID, h.Allowance, h.Currency, day)
		if err != nil {
			return err
		}
		return Exceeded(*s, SettingPerTransaction, u, h.At)
	}
	// Without a daily limit a day's counted sums still stay an int64: its
	// largest is the limit (docs/limits.md).
	counted := *s
	if counted.DailyMinor == nil {
		most := int64(math.MaxInt64)
		counted.DailyMinor = &most
	}
	ok, err := tx.ReserveAllowance(ctx, h, day, counted.DailyMinor)
	if err != nil || ok {
		return err
	}
	u, err := tx.AllowanceUsage(ctx, h.KeyID, h.Allowance, h.Currency, day)
	if err != nil {
		return err
	}
	return Exceeded(counted, SettingDaily, u, h.At)
}

// Settle ends a resource's reservation: consumedMinor (a succeeded
// payment's captured amount, a payout's amount; 0 when it failed) becomes
// used, the rest is released. It is idempotent.
func Settle(ctx context.Context, tx Tx, resource, resourceID string, consumedMinor int64, at time.Time) error {
	return tx.SettleAllowance(ctx, resource, resourceID, max(consumedMinor, 0), at)
}
