package stripe

import (
	"context"
	"strings"
	"time"

	sdk "github.com/stripe/stripe-go/v85"

	"github.com/paygate/paygate/internal/provider"
)

// locales are the Checkout page's languages for Paygate's locales.
var locales = map[string]string{"en": "en", "ru": "ru"}

// HostedSession implements provider.HostedPages: a Checkout Session in
// payment mode (docs/design/decisions.md section 16) whose PaymentIntent
// carries the operation id; the payer comes back to ReturnURL whether they
// paid or gave up.
func (a *Adapter) HostedSession(ctx context.Context, r provider.HostedSessionRequest) (provider.HostedSessionResult, error) {
	need := provider.Charge
	if r.Authorize {
		need = provider.Authorize
	}
	if err := a.need(r.Profile, provider.HostedPage, need); err != nil {
		return provider.HostedSessionResult{}, err
	}
	if r.OperationID == "" || r.ReturnURL == "" {
		return provider.HostedSessionResult{}, provider.Errorf(provider.Invalid, "an operation id and a return URL are required")
	}
	ctx, o := observe(ctx)
	name := r.Description
	if name == "" {
		name = "Order " + r.OrderID
	}
	capture := "automatic"
	if r.Authorize {
		capture = "manual"
	}
	meta := map[string]string{MetadataKey: r.OperationID}
	p := &sdk.CheckoutSessionCreateParams{
		Params: params(ctx, r.OperationID, ""),
		Mode:   sdk.String("payment"),
		LineItems: []*sdk.CheckoutSessionCreateLineItemParams{{
			Quantity: sdk.Int64(1),
			PriceData: &sdk.CheckoutSessionCreateLineItemPriceDataParams{
				Currency: sdk.String(strings.ToLower(r.Currency)), UnitAmount: sdk.Int64(r.AmountMinor),
				ProductData: &sdk.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: sdk.String(name)},
			},
		}},
		PaymentMethodTypes: []*string{sdk.String("card")},
		PaymentIntentData:  &sdk.CheckoutSessionCreatePaymentIntentDataParams{CaptureMethod: sdk.String(capture), Metadata: meta},
		SuccessURL:         sdk.String(r.ReturnURL),
		CancelURL:          sdk.String(r.ReturnURL),
		Metadata:           map[string]string{MetadataKey: r.OperationID},
		Locale:             sdk.String("auto"),
	}
	if l, ok := locales[r.Locale]; ok {
		p.Locale = sdk.String(l)
	}
	if r.OrderID != "" {
		p.ClientReferenceID = sdk.String(r.OrderID)
	}
	if !r.ExpiresAt.IsZero() {
		// Stripe takes 30 minutes to 24 hours from now.
		now := time.Now()
		at := r.ExpiresAt
		if lo := now.Add(31 * time.Minute); at.Before(lo) {
			at = lo
		}
		if hi := now.Add(24 * time.Hour); at.After(hi) {
			at = hi
		}
		p.ExpiresAt = sdk.Int64(at.Unix())
	}
	s, err := a.api.V1CheckoutSessions.Create(ctx, p)
	if err != nil {
		return provider.HostedSessionResult{}, classify(err, o)
	}
	return provider.HostedSessionResult{ProviderID: s.ID, URL: s.URL}, nil
}

// sessionStatus reads a hosted page's outcome: pending while the page is
// open (or expired: Paygate's own session ends the payment), else the
// PaymentIntent the payer's payment made.
func (a *Adapter) sessionStatus(ctx context.Context, id string) (provider.PayResult, error) {
	ctx, o := observe(ctx)
	s, err := a.api.V1CheckoutSessions.Retrieve(ctx, id, &sdk.CheckoutSessionRetrieveParams{Params: sdk.Params{Context: ctx}})
	if err != nil {
		return provider.PayResult{}, classify(err, o)
	}
	if s.Status != sdk.CheckoutSessionStatusComplete || s.PaymentIntent == nil || s.PaymentIntent.ID == "" {
		return provider.PayResult{Status: provider.StatusPending, ProviderID: s.ID}, nil
	}
	return a.retrieve(ctx, s.PaymentIntent.ID)
}
