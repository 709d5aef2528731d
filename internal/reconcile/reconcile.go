// Package reconcile compares, per acquirer account and UTC day, the money
// Paygate recorded as moved with the acquirer's own records
// (docs/design/decisions.md section 18; docs/reconciliation.md): matched
// by Paygate's operation id, every difference a break with both sides.
// Reading an acquirer's records is an optional provider capability
// (provider.Records): an acquirer without it is not reconciled.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/paygate/paygate/internal/provider"
)

// The kinds of break.
const (
	MissingAtProvider   = "missing_at_provider"   // Paygate says money moved; the acquirer has nothing
	MissingInPaygate    = "missing_in_paygate"    // the acquirer moved money Paygate does not know
	AmountMismatch      = "amount_mismatch"       // both moved it, not the same amount
	CurrencyMismatch    = "currency_mismatch"     // both moved it, not in the same currency
	StatusMismatch      = "status_mismatch"       // both know the operation, not as the same movement (captured here, held there)
	DuplicateAtProvider = "duplicate_at_provider" // the acquirer moved money twice for one operation
)

// BreakKinds lists the kinds, for metrics and pages.
var BreakKinds = []string{MissingAtProvider, MissingInPaygate, AmountMismatch, CurrencyMismatch, StatusMismatch, DuplicateAtProvider}

// Edge is how close to a day's edge an entry the other side has on the
// neighbouring day is pending, not a break.
const Edge = 2 * time.Hour

// Side is one side's view of a movement.
type Side struct {
	Kind        string // provider.MoveCharge and its siblings
	AmountMinor int64
	Currency    string
	At          time.Time
	Ref         string // the acquirer's own id of the movement (its side only)
}

// Movement is a movement Paygate recorded: Key is its operation id.
type Movement struct {
	Key         string
	PaymentID   string // the payment or payout
	AccessKeyID string
	Side
}

// Break is a difference, with both sides as each has it (nil: none).
type Break struct {
	Kind        string
	Key         string // the operation id, when known
	PaymentID   string
	AccessKeyID string
	Paygate     *Side
	Provider    *Side
}

// Result is a day's reconciliation of one account.
type Result struct {
	Provider   string
	Day        time.Time // 00:00 UTC
	Paygate    int       // Paygate's movements of the day
	AtProvider int       // the acquirer's
	Matched    int
	Pending    int // within Edge of the day's edges, found on the neighbouring day
	FeesMinor  int64
	Breaks     []Break
}

// ByKind counts the breaks by kind.
func (r Result) ByKind() map[string]int {
	out := map[string]int{}
	for _, k := range BreakKinds {
		out[k] = 0
	}
	for _, b := range r.Breaks {
		out[b.Kind]++
	}
	return out
}

// Window is what both sides must be read over for day: the day and Edge
// either side of it.
func Window(day time.Time) (from, to time.Time) {
	d := Day(day)
	return d.Add(-Edge), d.Add(24*time.Hour + Edge)
}

// Day is the UTC day of t, at 00:00.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Compare reconciles day from both sides' movements over Window(day).
func Compare(providerName string, day time.Time, paygate []Movement, atProvider []provider.Movement) Result {
	start := Day(day)
	end := start.Add(24 * time.Hour)
	in := func(t time.Time) bool { return !t.Before(start) && t.Before(end) }
	near := func(t time.Time) bool { return t.Sub(start) < Edge || end.Sub(t) <= Edge }
	res := Result{Provider: providerName, Day: start}

	ours := map[string][]Movement{}
	for _, m := range paygate {
		ours[m.Key] = append(ours[m.Key], m)
	}
	theirs := map[string][]provider.Movement{}
	for _, p := range atProvider {
		if p.OperationID != "" {
			theirs[p.OperationID] = append(theirs[p.OperationID], p)
		}
	}
	side := func(p provider.Movement) *Side {
		return &Side{Kind: p.Kind, AmountMinor: p.AmountMinor, Currency: p.Currency, At: p.At.UTC(), Ref: p.Ref}
	}

	// Breaks in time order; the callers' slices stay as they were.
	paygate, atProvider = slices.Clone(paygate), slices.Clone(atProvider)
	sort.SliceStable(paygate, func(i, j int) bool { return paygate[i].At.Before(paygate[j].At) })
	for _, m := range paygate {
		if !in(m.At) {
			continue
		}
		res.Paygate++
		mine := m.Side
		b := Break{Key: m.Key, PaymentID: m.PaymentID, AccessKeyID: m.AccessKeyID, Paygate: &mine}
		var today, other []provider.Movement
		for _, p := range theirs[m.Key] {
			if in(p.At) {
				today = append(today, p)
			} else {
				other = append(other, p)
			}
		}
		var same []provider.Movement
		for _, p := range today {
			if p.Kind == m.Kind {
				same = append(same, p)
			}
		}
		switch {
		case len(today) == 0 && len(other) > 0 && near(m.At):
			res.Pending++
			continue
		case len(today) == 0:
			b.Kind = MissingAtProvider
		case len(same) == 0:
			b.Kind, b.Provider = StatusMismatch, side(today[0])
		case len(same) > 1:
			b.Kind, b.Provider = DuplicateAtProvider, side(same[1])
		case same[0].Currency != m.Currency:
			b.Kind, b.Provider = CurrencyMismatch, side(same[0])
		case same[0].AmountMinor != m.AmountMinor:
			b.Kind, b.Provider = AmountMismatch, side(same[0])
		default:
			res.Matched++
			continue
		}
		res.Breaks = append(res.Breaks, b)
	}

	sort.SliceStable(atProvider, func(i, j int) bool { return atProvider[i].At.Before(atProvider[j].At) })
	for _, p := range atProvider {
		if !in(p.At) {
			continue
		}
		res.AtProvider++
		res.FeesMinor += p.FeeMinor
		var today, other int
		for _, m := range ours[p.OperationID] {
			if p.OperationID == "" {
				break
			}
			if in(m.At) {
				today++
			} else {
				other++
			}
		}
		switch {
		case today > 0:
			continue // compared above
		case other > 0 && near(p.At):
			res.Pending++
		default:
			res.Breaks = append(res.Breaks, Break{Kind: MissingInPaygate, Key: p.OperationID, Provider: side(p)})
		}
	}
	return res
}

// Store is what a run reads and writes.
type Store interface {
	// PaygateMovements calls fn with the money movements Paygate recorded
	// on the account's channels at a time in [from, to).
	PaygateMovements(ctx context.Context, providerName string, from, to time.Time, fn func(Movement) error) error
	// BeginReconciliation claims the account's day: false when another
	// run holds it (started after staleBefore).
	BeginReconciliation(ctx context.Context, providerName string, day, now, staleBefore time.Time) (bool, error)
	// FinishReconciliation stores the result, replacing the day's earlier
	// one, and releases the claim.
	FinishReconciliation(ctx context.Context, r Result, now time.Time) error
	// AbandonReconciliation releases a claim whose run failed.
	AbandonReconciliation(ctx context.Context, providerName string, day time.Time) error
}

// Providers finds an account's provider.
type Providers interface {
	Provider(name string) (provider.Provider, error)
}

// ErrNoRecords: the account's acquirer offers no records to compare with.
var ErrNoRecords = errors.New("its acquirer offers no records: it is not reconciled")

// ErrRunning: another run holds the day.
var ErrRunning = errors.New("another run is reconciling this day now")

// Service runs reconciliations.
type Service struct {
	store     Store
	providers Providers
	now       func() time.Time
}

// NewService returns the reconciliation service.
func NewService(st Store, providers Providers, now func() time.Time) *Service {
	return &Service{store: st, providers: providers, now: now}
}

// Run reconciles the account's day and stores the result, replacing an
// earlier run's; two runs never hold one day at once.
func (s *Service) Run(ctx context.Context, providerName string, day time.Time) (Result, error) {
	p, err := s.providers.Provider(providerName)
	if err != nil {
		return Result{}, err
	}
	records, ok := p.(provider.Records)
	if !ok {
		return Result{}, fmt.Errorf("provider account %s: %w", providerName, ErrNoRecords)
	}
	day = Day(day)
	now := s.now().UTC()
	got, err := s.store.BeginReconciliation(ctx, providerName, day, now, now.Add(-time.Hour))
	if err != nil {
		return Result{}, err
	}
	if !got {
		return Result{}, ErrRunning
	}
	res, err := s.compare(ctx, providerName, records, day)
	if err != nil {
		return Result{}, errors.Join(err, s.store.AbandonReconciliation(context.WithoutCancel(ctx), providerName, day))
	}
	return res, s.store.FinishReconciliation(ctx, res, s.now().UTC())
}

func (s *Service) compare(ctx context.Context, providerName string, records provider.Records, day time.Time) (Result, error) {
	from, to := Window(day)
	var ours []Movement
	if err := s.store.PaygateMovements(ctx, providerName, from, to, func(m Movement) error {
		ours = append(ours, m)
		return nil
	}); err != nil {
		return Result{}, err
	}
	var theirs []provider.Movement
	if err := records.Movements(ctx, from, to, func(m provider.Movement) error {
		theirs = append(theirs, m)
		return nil
	}); err != nil {
		return Result{}, fmt.Errorf("read the acquirer's records: %w", err)
	}
	return Compare(providerName, day, ours, theirs), nil
}
