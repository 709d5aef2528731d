package server

import (
	"encoding/json"
	"time"

	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/verification"
)

// Views turn the resources into their API form as GET shows them: the
// object of every event a resource's status change records
// (docs/design/decisions.md section 6). They need only the public URL and
// the clock, so the composition root builds them before the domain
// services, which take them as constructor arguments: a service that
// would record no events does not compile.
type Views struct {
	publicURL string
	now       func() time.Time
}

// NewViews returns the views of a server whose links start with
// publicURL (no trailing slash).
func NewViews(publicURL string, now func() time.Time) Views {
	return Views{publicURL: publicURL, now: now}
}

// Payment is the payment as GET /payments/{id} shows it now.
func (v Views) Payment(p *payment.Payment) ([]byte, error) {
	return json.Marshal(v.paymentAt(p, v.now()))
}

// Payout is the payout as GET /payouts/{id} shows it.
func (v Views) Payout(p *payout.Payout) ([]byte, error) { return json.Marshal(payoutView(p)) }

// Verification is the verification as GET /card-verifications/{id} shows it.
func (v Views) Verification(c *verification.Verification) ([]byte, error) {
	return json.Marshal(verificationView(c))
}

// Subscription is the subscription as GET /subscriptions/{id} shows it.
func (v Views) Subscription(sub *subscription.Subscription) ([]byte, error) {
	return json.Marshal(subscriptionView(sub))
}

// Mandate is the mandate as GET /mandates/{id} shows it.
func (v Views) Mandate(m *subscription.Mandate) ([]byte, error) { return json.Marshal(mandateView(m)) }
