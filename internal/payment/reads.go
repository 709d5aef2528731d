package payment

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/money"
)

// Store is what the service reads outside a transaction, for the API and
// the checkout (the store's Store is one).
type Store interface {
	FindPaymentForKey(ctx context.Context, keyID, id string) (*Payment, error)
	FindSessionForKey(ctx context.Context, keyID, sessionID string) (*Payment, error)
	FindSessionByID(ctx context.Context, sessionID string) (*Payment, error)
	ListPayments(ctx context.Context, keyID string, f Filter) ([]*Payment, error)
	EachPaymentPage(ctx context.Context, keyID string, f Filter, size int, fn func(page []*Payment) error) error
	PaymentTotals(ctx context.Context, keyID string, f Filter) ([]CurrencyTotals, error)
	ListRefunds(ctx context.Context, paymentID string) ([]Refund, error)
	PaymentAttempts(ctx context.Context, paymentID string) ([]Attempt, error)
	FindChannelByID(ctx context.Context, id string) (merchant.Channel, error)
}

// LockTx is what locking a key's payment reads in the request's
// transaction.
type LockTx interface {
	LockPaymentForKey(ctx context.Context, keyID, id string) (*Payment, error)
}

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
	// of their amounts, exact (a sum of int64 amounts can exceed int64).
	SucceededCount int64
	SucceededMinor money.Sum
	// CapturedMinor and RefundedMinor sum captured_amount_minor and
	// refunded_amount_minor over every matching payment.
	CapturedMinor, RefundedMinor money.Sum
	// DeclinedCount is the payments in status declined.
	DeclinedCount int64
}

// FindForKey is the key's payment id (getPayment (GET /payments/{id})):
// another key's, like one that does not exist, is 404.
func (s *Service) FindForKey(ctx context.Context, keyID, id string) (*Payment, error) {
	p, err := s.Store.FindPaymentForKey(ctx, keyID, id)
	return p, fault.Missing(err, s.ErrNotFound, "no payment with this id")
}

// LockForKey is FindForKey in the request's transaction, the payment
// locked until it ends, so that of concurrent operations each sees what
// the one before it queued (docs/payments.md, "Concurrent operations").
func (s *Service) LockForKey(ctx context.Context, tx LockTx, keyID, id string) (*Payment, error) {
	p, err := tx.LockPaymentForKey(ctx, keyID, id)
	return p, fault.Missing(err, s.ErrNotFound, "no payment with this id")
}

// FindSessionForKey is the key's payment of the hosted session sessionID
// (getPaymentSession (GET /payment-sessions/{id})): another key's is 404.
func (s *Service) FindSessionForKey(ctx context.Context, keyID, sessionID string) (*Payment, error) {
	p, err := s.Store.FindSessionForKey(ctx, keyID, sessionID)
	return p, fault.Missing(err, s.ErrNotFound, "no payment session with this id")
}

// FindSession is the payment of the hosted session sessionID, whatever
// key owns it (the payer's page knows only the session id); the store's
// "no such row" is returned as it is.
func (s *Service) FindSession(ctx context.Context, sessionID string) (*Payment, error) {
	return s.Store.FindSessionByID(ctx, sessionID)
}

// CheckoutSession is FindSession in the checkout page's transaction.
func (s *Service) CheckoutSession(ctx context.Context, tx CheckoutTx, sessionID string) (*Payment, error) {
	return tx.FindSessionByID(ctx, sessionID)
}

// CheckoutChannel is the channel p is on, read in the checkout page's
// transaction: its checkout mode says what the page shows.
func (s *Service) CheckoutChannel(ctx context.Context, tx CheckoutTx, p *Payment) (merchant.Channel, error) {
	return tx.FindChannelByID(ctx, p.ChannelID)
}

// List is up to f.Limit of the key's payments matching f, newest first
// (listPayments (GET /api/v1/payments)).
func (s *Service) List(ctx context.Context, keyID string, f Filter) ([]*Payment, error) {
	return s.Store.ListPayments(ctx, keyID, f)
}

// EachPage calls fn with every payment of the key matching f (its keyset
// bound and Limit ignored), newest first, at most size at a time, each
// page its own query, so that the export's memory does not grow with the
// number of payments (docs/design/decisions.md section 13).
func (s *Service) EachPage(ctx context.Context, keyID string, f Filter, size int, fn func(page []*Payment) error) error {
	return s.Store.EachPaymentPage(ctx, keyID, f, size, fn)
}

// Totals are the key's payments matching f (keyset bound and Limit
// ignored) summed per currency, ordered by currency (getPaymentTotals
// (GET /cabinet/v1/payments/totals)).
func (s *Service) Totals(ctx context.Context, keyID string, f Filter) ([]CurrencyTotals, error) {
	return s.Store.PaymentTotals(ctx, keyID, f)
}

// Attempts lists a payment's attempts, oldest first: those that ended on
// an earlier channel, then the payment itself on its own
// (listPaymentAttempts (GET /payments/{id}/attempts); docs/design/decisions.md
// section 17).
func (s *Service) Attempts(ctx context.Context, p *Payment) ([]Attempt, error) {
	prior, err := s.Store.PaymentAttempts(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	ch, err := s.Store.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return nil, err
	}
	return AttemptsOf(p, prior, ch), nil
}

// AttemptsOf is a payment's attempts: the earlier ones, as stored, then
// the payment on its own channel ch.
func AttemptsOf(p *Payment, prior []Attempt, ch merchant.Channel) []Attempt {
	cur := Attempt{PaymentID: p.ID, ChannelID: ch.ID, Channel: ch.Alias, Status: p.Status, DeclineCode: p.DeclineCode,
		CreatedAt: p.CreatedAt}
	if n := len(prior); n > 0 {
		cur.CreatedAt = prior[n-1].EndedAt
	}
	switch p.Status {
	case PartiallyRefunded, Refunded:
		cur.Status = Succeeded // the attempt succeeded; refunds came after
	}
	return append(prior, cur)
}

// Refunds are p's refunds (listPaymentRefunds (GET
// /payments/{id}/refunds)); p is the caller's, found by FindForKey.
func (s *Service) Refunds(ctx context.Context, p *Payment) ([]Refund, error) {
	return s.Store.ListRefunds(ctx, p.ID)
}
