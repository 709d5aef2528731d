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
	"sort"
	"strconv"
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
	// PaymentRef is the acquirer's id of the payment or payout: a movement
	// of the acquirer's with no operation id is matched by it.
	PaymentRef string
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

// Result is a day's reconciliation of one account: its counts. The
// breaks themselves are stored as they are found (Store.StageBreaks), so
// that a day of any size is compared in bounded memory.
type Result struct {
	Provider   string
	Day        time.Time // 00:00 UTC
	Paygate    int       // Paygate's movements of the day that were compared
	AtProvider int       // the acquirer's
	Matched    int
	Pending    int // within Edge of the day's edges, found on the neighbouring day
	FeesMinor  int64
	// ByKind counts the breaks by kind.
	ByKind map[string]int
}

// Breaks is how many breaks the day has.
func (r Result) Breaks() int {
	n := 0
	for _, c := range r.ByKind {
		n += c
	}
	return n
}

func newResult(providerName string, day time.Time) Result {
	res := Result{Provider: providerName, Day: Day(day), ByKind: map[string]int{}}
	for _, k := range BreakKinds {
		res.ByKind[k] = 0
	}
	return res
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

// Compare reconciles day from both sides' movements over Window(day), in
// memory: the breaks are returned in time order. Service.Run compares the
// same way, a key at a time, from staged rows.
func Compare(providerName string, day time.Time, paygate []Movement, atProvider []provider.Movement) (Result, []Break) {
	res := newResult(providerName, day)
	ours := map[string][]Movement{}
	for _, m := range paygate {
		ours[m.Key] = append(ours[m.Key], m)
	}
	// A payment's only movement of a kind: with two (two partial
	// refunds), an acquirer's movement without an operation id matches
	// neither (MatchStaged's rule).
	byRef := map[[2]string]string{}
	for _, m := range paygate {
		if m.PaymentRef == "" {
			continue
		}
		k := [2]string{m.PaymentRef, m.Kind}
		if _, twice := byRef[k]; twice {
			byRef[k] = ""
		} else {
			byRef[k] = m.Key
		}
	}
	theirs := map[string][]provider.Movement{}
	var keys []string
	for k := range ours {
		keys = append(keys, k)
	}
	for i, p := range atProvider {
		k := p.OperationID
		if k == "" && p.PaymentRef != "" {
			k = byRef[[2]string{p.PaymentRef, p.Kind}]
		}
		if k == "" {
			k = fmt.Sprintf("\x00%d", i) // its own key: matched by nothing
		}
		if _, ok := ours[k]; !ok && theirs[k] == nil {
			keys = append(keys, k)
		}
		theirs[k] = append(theirs[k], p)
	}
	sort.Strings(keys)
	var breaks []Break
	for _, k := range keys {
		compareKey(&res, ours[k], theirs[k], func(b Break) { breaks = append(breaks, b) })
	}
	sort.SliceStable(breaks, func(i, j int) bool { return breaks[i].at().Before(breaks[j].at()) })
	return res, breaks
}

// at is when a break's movement happened, Paygate's side first.
func (b Break) at() time.Time {
	if b.Paygate != nil {
		return b.Paygate.At
	}
	if b.Provider != nil {
		return b.Provider.At
	}
	return time.Time{}
}

// compareKey compares the movements both sides have under one key (an
// operation id, or a movement of the acquirer's matched by nothing), over
// Window(res.Day): counts go to res, breaks to emit.
func compareKey(res *Result, ours []Movement, theirs []provider.Movement, emit func(Break)) {
	start := res.Day
	end := start.Add(24 * time.Hour)
	in := func(t time.Time) bool { return !t.Before(start) && t.Before(end) }
	near := func(t time.Time) bool { return t.Sub(start) < Edge || end.Sub(t) <= Edge }
	side := func(p provider.Movement) *Side {
		return &Side{Kind: p.Kind, AmountMinor: p.AmountMinor, Currency: p.Currency, At: p.At.UTC(), Ref: p.Ref}
	}
	found := func(b Break) {
		res.ByKind[b.Kind]++
		emit(b)
	}
	var today, other []provider.Movement
	for _, p := range theirs {
		if in(p.At) {
			today = append(today, p)
		} else {
			other = append(other, p)
		}
	}
	oursToday, oursOther := 0, 0
	for _, m := range ours {
		if !in(m.At) {
			oursOther++
			continue
		}
		oursToday++
		res.Paygate++
		mine := m.Side
		b := Break{Key: m.Key, PaymentID: m.PaymentID, AccessKeyID: m.AccessKeyID, Paygate: &mine}
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
		found(b)
	}
	for _, p := range today {
		res.AtProvider++
		res.FeesMinor += p.FeeMinor
		switch {
		case oursToday > 0:
			continue // compared above
		case oursOther > 0 && near(p.At):
			res.Pending++
		default:
			found(Break{Kind: MissingInPaygate, Key: p.OperationID, Provider: side(p)})
		}
	}
}

// Claim is a run's hold on its account's day. Started, when the run
// claimed it, is its token: a run whose day was taken over (it ran over an
// hour) neither stores its result nor touches the new run's staged rows.
type Claim struct {
	Provider string
	Day      time.Time // 00:00 UTC
	Started  time.Time
}

// Stage names the claim's staged rows.
func (c Claim) Stage() string {
	return c.Day.UTC().Format(time.DateOnly) + "@" + strconv.FormatInt(c.Started.UnixMicro(), 10)
}

// ErrClaimLost: another run took the day over while this one ran.
var ErrClaimLost = errors.New("another run took this day over")

// Store is what a run reads and writes. A run stages both sides of its
// day in the database, under its claim, and compares them a key at a
// time, so that its memory does not grow with the day.
type Store interface {
	// BeginReconciliation claims the account's day: false when another
	// run holds it (started after staleBefore).
	BeginReconciliation(ctx context.Context, c Claim, staleBefore time.Time) (bool, error)
	// ClearStaged deletes what earlier runs of the day staged.
	ClearStaged(ctx context.Context, c Claim) error
	// StagePaygate stages the money movements Paygate recorded on the
	// account's channels at a time in [from, to), of the given kinds, and
	// returns how many.
	StagePaygate(ctx context.Context, c Claim, from, to time.Time, kinds []string) (int, error)
	// StageProvider stages movements of the acquirer's; seq is the first
	// one's place among the run's.
	StageProvider(ctx context.Context, c Claim, seq int, ms []provider.Movement) error
	// MatchStaged gives each staged movement of the acquirer's that has no
	// operation id the key of Paygate's only movement of the same kind and
	// provider payment id, if there is exactly one.
	MatchStaged(ctx context.Context, c Claim) error
	// StagedKeys calls fn with the staged movements of each key, a key at
	// a time, in key order; fn may write (StageBreaks).
	StagedKeys(ctx context.Context, c Claim, fn func(ours []Movement, theirs []provider.Movement) error) error
	// StageBreaks stages breaks found.
	StageBreaks(ctx context.Context, c Claim, bs []Break) error
	// FinishReconciliation stores the result, the staged breaks replacing
	// the day's earlier ones, clears the staged rows and releases the
	// claim, in one transaction; ErrClaimLost when the claim is no longer
	// the day's.
	FinishReconciliation(ctx context.Context, c Claim, r Result, now time.Time) error
	// AbandonReconciliation releases a claim whose run failed, the day's
	// stored result as it was.
	AbandonReconciliation(ctx context.Context, c Claim) error
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
	now := s.now().UTC().Truncate(time.Microsecond)
	c := Claim{Provider: providerName, Day: Day(day), Started: now}
	got, err := s.store.BeginReconciliation(ctx, c, now.Add(-StaleAfter))
	if err != nil {
		return Result{}, err
	}
	if !got {
		return Result{}, ErrRunning
	}
	res, err := s.compare(ctx, c, records)
	if err == nil {
		err = s.store.FinishReconciliation(ctx, c, res, s.now().UTC())
	}
	if err != nil {
		return Result{}, errors.Join(err, s.store.AbandonReconciliation(context.WithoutCancel(ctx), c))
	}
	return res, nil
}

// StaleAfter is how long a run holds its day before another may take it
// over (a run whose process died).
const StaleAfter = time.Hour

// stageBatch is how many rows a run writes at once.
const stageBatch = 1000

// compare stages both sides of the day over its Window and compares them
// a key at a time.
func (s *Service) compare(ctx context.Context, c Claim, records provider.Records) (Result, error) {
	kinds := allKinds
	if rk, ok := records.(provider.RecordKinds); ok {
		kinds = rk.RecordKinds()
	}
	if err := s.store.ClearStaged(ctx, c); err != nil {
		return Result{}, err
	}
	from, to := Window(c.Day)
	// Paygate's side an hour at a time: no long write (SQLite has one
	// writer, and payments go on meanwhile).
	for at := from; at.Before(to); at = at.Add(time.Hour) {
		end := at.Add(time.Hour)
		if end.After(to) {
			end = to
		}
		if _, err := s.store.StagePaygate(ctx, c, at, end, kinds); err != nil {
			return Result{}, err
		}
	}
	batch := make([]provider.Movement, 0, stageBatch)
	staged := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.store.StageProvider(ctx, c, staged, batch)
		staged += len(batch)
		batch = batch[:0]
		return err
	}
	if err := records.Movements(ctx, from, to, func(m provider.Movement) error {
		if batch = append(batch, m); len(batch) == stageBatch {
			return flush()
		}
		return nil
	}); err != nil {
		return Result{}, fmt.Errorf("read the acquirer's records: %w", err)
	}
	if err := flush(); err != nil {
		return Result{}, err
	}
	if err := s.store.MatchStaged(ctx, c); err != nil {
		return Result{}, err
	}
	res := newResult(c.Provider, c.Day)
	var found []Break
	if err := s.store.StagedKeys(ctx, c, func(ours []Movement, theirs []provider.Movement) error {
		compareKey(&res, ours, theirs, func(b Break) { found = append(found, b) })
		if len(found) < stageBatch {
			return nil
		}
		err := s.store.StageBreaks(ctx, c, found)
		found = found[:0]
		return err
	}); err != nil {
		return Result{}, err
	}
	return res, s.store.StageBreaks(ctx, c, found)
}

// allKinds are the kinds of movement an acquirer records unless it says
// otherwise (provider.RecordKinds).
var allKinds = []string{provider.MoveCharge, provider.MoveHold, provider.MoveCapture, provider.MoveRelease,
	provider.MoveRefund, provider.MoveTransfer}
