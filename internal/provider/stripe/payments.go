package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	sdk "github.com/stripe/stripe-go/v85"

	"github.com/paygate/paygate/internal/provider"
)

// Pay implements provider.Payments: a PaymentIntent confirmed at once
// (docs/design/decisions.md section 16). A card becomes a PaymentMethod
// first (Stripe's published API takes no raw card in the PaymentIntent);
// a saved card is its Customer and PaymentMethod; a wallet must carry a
// Stripe token. Saving a card puts it on the payer's Customer.
func (a *Adapter) Pay(ctx context.Context, r provider.PayRequest) (provider.PayResult, error) {
	if r.OperationID == "" {
		return provider.PayResult{}, provider.Errorf(provider.Invalid, "an operation id is required")
	}
	need, extra := provider.Charge, provider.Capability("")
	if r.Authorize {
		need = provider.Authorize
	}
	switch in := r.Instrument; {
	case in.Phone != "":
		return provider.PayResult{}, provider.Errorf(provider.Unsupported, "Stripe accounts take no mobile payments")
	case in.Wallet != nil:
		extra = provider.WalletToken
		if in.Wallet.Mode != "token" {
			extra = provider.WalletDirect
		}
	case in.SavedToken != "":
		extra = provider.SavedCards
	case in.Card == nil:
		return provider.PayResult{}, provider.Errorf(provider.Invalid, "a payment needs a card, a wallet or a saved card")
	}
	var save provider.Capability
	if r.SaveCard {
		save = provider.SavedCards
	}
	if err := a.need(r.Profile, need, extra, save); err != nil {
		return provider.PayResult{}, err
	}

	ctx, o := observe(ctx)
	var customer, method string
	switch in := r.Instrument; {
	case in.SavedToken != "":
		var ok bool
		if customer, method, ok = strings.Cut(in.SavedToken, "/"); !ok {
			return provider.PayResult{}, provider.Errorf(provider.Invalid, "the saved card's token is not a Stripe one")
		}
	default:
		pm, res, err := a.paymentMethod(ctx, o, r)
		if err != nil || res != nil {
			return deref(res), err
		}
		method = pm
	}
	if r.SaveCard && customer == "" {
		c, err := a.customer(ctx, o, r)
		if err != nil {
			return provider.PayResult{}, err
		}
		customer = c
	}

	p := &sdk.PaymentIntentCreateParams{
		Params:             params(ctx, r.OperationID, ""),
		Amount:             sdk.Int64(r.AmountMinor),
		Currency:           sdk.String(strings.ToLower(r.Currency)),
		Confirm:            sdk.Bool(true),
		CaptureMethod:      sdk.String("automatic"),
		PaymentMethod:      sdk.String(method),
		PaymentMethodTypes: []*string{sdk.String("card")},
		Metadata:           map[string]string{MetadataKey: r.OperationID},
	}
	if r.Authorize {
		p.CaptureMethod = sdk.String("manual")
	}
	if r.Description != "" {
		p.Description = sdk.String(r.Description)
	}
	if r.OrderID != "" {
		p.Metadata["paygate_order_id"] = r.OrderID
	}
	if customer != "" {
		p.Customer = sdk.String(customer)
	}
	if r.SaveCard {
		p.SetupFutureUsage = sdk.String("off_session")
	}
	if r.OffSession {
		p.OffSession = sdk.Bool(true)
	} else if r.ReturnURL != "" {
		p.ReturnURL = sdk.String(r.ReturnURL)
	}
	p.AddExpand("latest_charge")
	p.AddExpand("payment_method")
	pi, err := a.api.V1PaymentIntents.Create(ctx, p)
	if err != nil {
		return a.failed(err, o)
	}
	return a.result(pi), nil
}

// paymentMethod makes the request's card or wallet token a PaymentMethod;
// a card Stripe refuses outright (a wrong number) is a decline, res.
func (a *Adapter) paymentMethod(ctx context.Context, o *observed, r provider.PayRequest) (string, *provider.PayResult, error) {
	p := &sdk.PaymentMethodCreateParams{Params: params(ctx, r.OperationID, "pm"), Type: sdk.String("card")}
	switch in := r.Instrument; {
	case in.Card != nil:
		p.Card = &sdk.PaymentMethodCreateCardParams{Number: sdk.String(in.Card.Number),
			ExpMonth: sdk.Int64(int64(in.Card.ExpMonth)), ExpYear: sdk.Int64(int64(in.Card.ExpYear))}
		if in.Card.CVV != "" {
			p.Card.CVC = sdk.String(in.Card.CVV)
		}
		if in.Card.Holder != "" {
			p.BillingDetails = &sdk.PaymentMethodCreateBillingDetailsParams{Name: sdk.String(in.Card.Holder)}
		}
	case in.Wallet != nil:
		tok := walletToken(in.Wallet.Payload)
		if tok == "" {
			return "", nil, provider.Errorf(provider.Invalid, "the %s payload carries no Stripe token (tok_…)", in.Wallet.Type)
		}
		p.Card = &sdk.PaymentMethodCreateCardParams{Token: sdk.String(tok)}
	}
	pm, err := a.api.V1PaymentMethods.Create(ctx, p)
	if err != nil {
		res, err := a.failed(err, o)
		if err != nil {
			return "", nil, err
		}
		return "", &res, nil
	}
	return pm.ID, nil, nil
}

// walletToken finds the Stripe token in a wallet's payload: the payload
// itself ("tok_…") or Google Pay's tokenizationData.token, a JSON object
// whose id is the token, as Stripe's gateway integration returns it.
func walletToken(payload json.RawMessage) string {
	var s string
	if json.Unmarshal(payload, &s) == nil {
		if strings.HasPrefix(s, "tok_") {
			return s
		}
		payload = json.RawMessage(s)
	}
	var v struct {
		ID                string `json:"id"`
		Token             string `json:"token"`
		PaymentMethodData *struct {
			TokenizationData struct {
				Token string `json:"token"`
			} `json:"tokenizationData"`
		} `json:"paymentMethodData"`
	}
	if json.Unmarshal(payload, &v) != nil {
		return ""
	}
	switch {
	case strings.HasPrefix(v.ID, "tok_"):
		return v.ID
	case strings.HasPrefix(v.Token, "tok_"):
		return v.Token
	case v.PaymentMethodData != nil:
		return walletToken(json.RawMessage(v.PaymentMethodData.TokenizationData.Token))
	}
	return ""
}

// customer finds the payer's Customer by the opaque payer id, or makes
// one: one Customer per merchant key and customer reference
// (docs/design/decisions.md section 16). The choice is the same however
// often the operation is sent: the oldest Customer the search finds, else
// one made under an Idempotency-Key of the payer (Stripe replays it for 24
// hours, by when its search, which lags by up to a minute, finds it).
func (a *Adapter) customer(ctx context.Context, o *observed, r provider.PayRequest) (string, error) {
	if r.Payer == "" {
		c, err := a.api.V1Customers.Create(ctx, &sdk.CustomerCreateParams{Params: params(ctx, r.OperationID, "customer")})
		if err != nil {
			_, err := a.failed(err, o)
			return "", err
		}
		return c.ID, nil
	}
	it := a.api.V1Customers.Search(ctx, &sdk.CustomerSearchParams{SearchParams: sdk.SearchParams{
		Context: ctx, Query: "metadata['" + payerKey + "']:'" + r.Payer + "'", Limit: sdk.Int64(100)}})
	var oldest *sdk.Customer
	for c, err := range it.All(ctx) {
		if err != nil {
			_, err := a.failed(err, o)
			return "", err
		}
		if c.Metadata[payerKey] == r.Payer && (oldest == nil || c.Created < oldest.Created ||
			c.Created == oldest.Created && c.ID < oldest.ID) {
			oldest = c
		}
	}
	if oldest != nil {
		return oldest.ID, nil
	}
	p := &sdk.CustomerCreateParams{Params: sdk.Params{Context: ctx, IdempotencyKey: sdk.String("paygate-payer-" + r.Payer)},
		Metadata: map[string]string{payerKey: r.Payer}}
	c, err := a.api.V1Customers.Create(ctx, p)
	if err != nil {
		_, err := a.failed(err, o)
		return "", err
	}
	return c.ID, nil
}

// failed is the result of a call that failed: a card error is a decline
// (with the PaymentIntent Stripe made, when it made one); anything else
// is the seam's error.
func (a *Adapter) failed(err error, o *observed) (provider.PayResult, error) {
	var se *sdk.Error
	if errors.As(err, &se) && se.Type == sdk.ErrorTypeCard {
		d := declineOf(string(se.DeclineCode), string(se.Code))
		res := provider.PayResult{Status: provider.StatusDeclined, DeclineCode: d.Code, DeclineMessage: d.Message,
			Reroutable: d.Reroute}
		if se.PaymentIntent != nil {
			res.ProviderID = se.PaymentIntent.ID
		}
		return res, nil
	}
	return provider.PayResult{}, classify(err, o)
}

// result reads a PaymentIntent as the seam's result.
func (a *Adapter) result(pi *sdk.PaymentIntent) provider.PayResult {
	res := provider.PayResult{ProviderID: pi.ID}
	switch pi.Status {
	case sdk.PaymentIntentStatusSucceeded:
		res.Status, res.CapturedAmountMinor = provider.StatusSucceeded, pi.AmountReceived
	case sdk.PaymentIntentStatusRequiresCapture:
		res.Status = provider.StatusAuthorized
	case sdk.PaymentIntentStatusRequiresAction:
		res.Status = provider.StatusRequiresAction
		if na := pi.NextAction; na != nil && na.RedirectToURL != nil && na.RedirectToURL.URL != "" {
			res.NextAction = &provider.NextAction{Type: "three_ds", URL: na.RedirectToURL.URL}
		}
	case sdk.PaymentIntentStatusCanceled:
		res.Status = provider.StatusCanceled
	case sdk.PaymentIntentStatusRequiresPaymentMethod:
		if e := pi.LastPaymentError; e != nil {
			d := declineOf(string(e.DeclineCode), string(e.Code))
			res.Status, res.DeclineCode, res.DeclineMessage = provider.StatusDeclined, d.Code, d.Message
			res.Reroutable = d.Reroute
		} else {
			res.Status = provider.StatusPending
		}
	default: // processing, requires_confirmation
		res.Status = provider.StatusPending
	}
	if ch := pi.LatestCharge; ch != nil {
		res.RefundedAmountMinor = ch.AmountRefunded
		if d := ch.PaymentMethodDetails; d != nil && d.Card != nil && d.Card.CaptureBefore > 0 && res.Status == provider.StatusAuthorized {
			t := time.Unix(d.Card.CaptureBefore, 0).UTC()
			res.AuthorizationExpiresAt = &t
		}
	}
	if pm := pi.PaymentMethod; pm != nil && pm.Card != nil {
		res.CardScheme = string(pm.Card.Brand)
		res.CardExpMonth, res.CardExpYear = int(pm.Card.ExpMonth), int(pm.Card.ExpYear)
		if pi.SetupFutureUsage == sdk.PaymentIntentSetupFutureUsageOffSession && pi.Customer != nil && pi.Customer.ID != "" &&
			(res.Status == provider.StatusSucceeded || res.Status == provider.StatusAuthorized) {
			res.CardToken = pi.Customer.ID + "/" + pm.ID
		}
	}
	return res
}

func deref(r *provider.PayResult) provider.PayResult {
	if r == nil {
		return provider.PayResult{}
	}
	return *r
}

// Capture implements provider.Payments: all or part of a hold.
func (a *Adapter) Capture(ctx context.Context, r provider.CaptureRequest) (provider.PayResult, error) {
	if err := a.need(r.Profile, provider.Capture); err != nil {
		return provider.PayResult{}, err
	}
	if r.OperationID == "" || r.ProviderID == "" {
		return provider.PayResult{}, provider.Errorf(provider.Invalid, "an operation id and the payment's provider id are required")
	}
	ctx, o := observe(ctx)
	p := &sdk.PaymentIntentCaptureParams{Params: params(ctx, r.OperationID, ""),
		Metadata: map[string]string{captureKey: r.OperationID}}
	if r.AmountMinor > 0 {
		p.AmountToCapture = sdk.Int64(r.AmountMinor)
	}
	p.AddExpand("latest_charge")
	p.AddExpand("payment_method")
	pi, err := a.api.V1PaymentIntents.Capture(ctx, r.ProviderID, p)
	if err != nil {
		return provider.PayResult{}, classify(err, o)
	}
	return a.result(pi), nil
}

// Cancel implements provider.Payments: a hold released.
func (a *Adapter) Cancel(ctx context.Context, r provider.CancelRequest) (provider.PayResult, error) {
	if err := a.need(r.Profile, provider.Cancel); err != nil {
		return provider.PayResult{}, err
	}
	if r.OperationID == "" || r.ProviderID == "" {
		return provider.PayResult{}, provider.Errorf(provider.Invalid, "an operation id and the payment's provider id are required")
	}
	ctx, o := observe(ctx)
	p := &sdk.PaymentIntentCancelParams{Params: params(ctx, r.OperationID, "")}
	p.AddExpand("latest_charge")
	p.AddExpand("payment_method")
	pi, err := a.api.V1PaymentIntents.Cancel(ctx, r.ProviderID, p)
	if err != nil {
		return provider.PayResult{}, classify(err, o)
	}
	return a.result(pi), nil
}

// Refund implements provider.Payments: a Refund of the PaymentIntent,
// carrying the operation id in its metadata.
func (a *Adapter) Refund(ctx context.Context, r provider.RefundRequest) (provider.PayResult, error) {
	if err := a.need(r.Profile, provider.Refund); err != nil {
		return provider.PayResult{}, err
	}
	if r.OperationID == "" || r.ProviderID == "" {
		return provider.PayResult{}, provider.Errorf(provider.Invalid, "an operation id and the payment's provider id are required")
	}
	ctx, o := observe(ctx)
	p := &sdk.RefundCreateParams{Params: params(ctx, r.OperationID, ""), PaymentIntent: sdk.String(r.ProviderID),
		Metadata: map[string]string{MetadataKey: r.OperationID}}
	if r.AmountMinor > 0 {
		p.Amount = sdk.Int64(r.AmountMinor)
	}
	rf, err := a.api.V1Refunds.Create(ctx, p)
	if err != nil {
		return provider.PayResult{}, classify(err, o)
	}
	return refundResult(rf), nil
}

func refundResult(rf *sdk.Refund) provider.PayResult {
	res := provider.PayResult{RefundedAmountMinor: rf.Amount}
	switch rf.Status {
	case sdk.RefundStatusSucceeded:
		res.Status = provider.StatusSucceeded
	case sdk.RefundStatusFailed, sdk.RefundStatusCanceled:
		res.Status, res.DeclineCode = provider.StatusFailed, "processing_error"
	default: // pending, requires_action
		res.Status = provider.StatusPending
	}
	return res
}

// Confirm implements provider.Payments: the outcome of a 3DS step, read
// back. Stripe asks for no one-time code.
func (a *Adapter) Confirm(ctx context.Context, r provider.ConfirmRequest) (provider.PayResult, error) {
	if r.Code != "" {
		return provider.PayResult{}, provider.Errorf(provider.Unsupported, "Stripe asks for no one-time code")
	}
	if r.ProviderID == "" {
		return provider.PayResult{}, provider.Errorf(provider.Invalid, "the payment's provider id is required")
	}
	return a.retrieve(ctx, r.ProviderID)
}

func (a *Adapter) retrieve(ctx context.Context, id string) (provider.PayResult, error) {
	ctx, o := observe(ctx)
	p := &sdk.PaymentIntentRetrieveParams{Params: sdk.Params{Context: ctx}}
	p.AddExpand("latest_charge")
	p.AddExpand("payment_method")
	pi, err := a.api.V1PaymentIntents.Retrieve(ctx, id, p)
	if err != nil {
		return provider.PayResult{}, classify(err, o)
	}
	return a.result(pi), nil
}

// Status implements provider.Payments: the outcome of an operation whose
// answer was lost (docs/design/decisions.md section 16). A hosted page is
// read by its Checkout Session; an operation on a known PaymentIntent by
// that PaymentIntent (and its Refunds); a payment without one by a search
// on the operation id in its metadata. NotFound means Stripe shows no
// trace of the operation; its search lags by up to a minute, so that may
// be an operation carried out a moment ago: sending it again reuses its
// Idempotency-Key, and Stripe replays what it did.
func (a *Adapter) Status(ctx context.Context, r provider.StatusRequest) (provider.PayResult, error) {
	if r.OperationID == "" {
		return provider.PayResult{}, provider.Errorf(provider.Invalid, "an operation id is required")
	}
	switch {
	case strings.HasPrefix(r.ProviderID, "cs_"):
		return a.sessionStatus(ctx, r.ProviderID)
	case r.ProviderID != "":
		return a.followUpStatus(ctx, r)
	}
	ctx, o := observe(ctx)
	it := a.api.V1PaymentIntents.Search(ctx, &sdk.PaymentIntentSearchParams{SearchParams: sdk.SearchParams{
		Context: ctx, Query: "metadata['" + MetadataKey + "']:'" + r.OperationID + "'", Limit: sdk.Int64(10)}})
	for pi, err := range it.All(ctx) {
		if err != nil {
			return provider.PayResult{}, classify(err, o)
		}
		if pi.Metadata[MetadataKey] == r.OperationID {
			return a.retrieve(ctx, pi.ID) // the search's copy lacks the expansions
		}
	}
	return provider.PayResult{}, provider.Errorf(provider.NotFound, "Stripe has no PaymentIntent of this operation")
}

// followUpStatus reads an operation on a known PaymentIntent: the payment
// itself, a capture (recorded in the PaymentIntent's metadata), a refund
// (in the Refund's), or a cancel, done when the PaymentIntent is
// canceled.
func (a *Adapter) followUpStatus(ctx context.Context, r provider.StatusRequest) (provider.PayResult, error) {
	ctx, o := observe(ctx)
	p := &sdk.PaymentIntentRetrieveParams{Params: sdk.Params{Context: ctx}}
	p.AddExpand("latest_charge")
	p.AddExpand("payment_method")
	pi, err := a.api.V1PaymentIntents.Retrieve(ctx, r.ProviderID, p)
	if err != nil {
		return provider.PayResult{}, classify(err, o)
	}
	if pi.Metadata[MetadataKey] == r.OperationID || pi.Metadata[captureKey] == r.OperationID {
		return a.result(pi), nil
	}
	refunds := a.api.V1Refunds.List(ctx, &sdk.RefundListParams{PaymentIntent: sdk.String(pi.ID),
		ListParams: sdk.ListParams{Context: ctx, Limit: sdk.Int64(100)}})
	for rf, err := range refunds.All(ctx) {
		if err != nil {
			return provider.PayResult{}, classify(err, o)
		}
		if rf.Metadata[MetadataKey] == r.OperationID {
			return refundResult(rf), nil
		}
	}
	if pi.Status == sdk.PaymentIntentStatusCanceled {
		return a.result(pi), nil // a cancel: the one way to a canceled PaymentIntent
	}
	// A capture not recorded on the PaymentIntent, a refund not among its
	// Refunds, a 3DS step still open: sending it is safe (and a confirm
	// only reads).
	return provider.PayResult{}, provider.Errorf(provider.NotFound, "Stripe has not carried this operation out")
}
