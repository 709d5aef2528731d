// Package sandbox is Paygate's adapter for the bundled sandbox acquirer
// (docs/design/decisions.md section 7; docs/sandbox.md). It talks to the
// acquirer over HTTP only, through the JSON of package wire, and imports
// nothing of the acquirer itself (package acquirer), as an adapter for a real
// acquirer would; it passes the conformance suite (providertest,
// docs/providers.md).
package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// Name is the provider name channels use for the sandbox.
const Name = "sandbox"

// Adapter is Paygate's provider.Provider for the sandbox acquirer. It talks
// to the sandbox over HTTP only, exactly as an adapter for a real acquirer
// would, so that everything Paygate does with the sandbox it could do with
// any acquirer.
type Adapter struct {
	// Profiles is what each profile can do, as data; NewAdapter sets
	// wire.DefaultProfiles. It must agree with the acquirer's Config.Profiles.
	Profiles map[string]provider.Capabilities

	name   string
	base   string
	key    string
	client *http.Client
	now    func() time.Time // for Retry-After dates
}

// The sandbox offers every optional interface of the seam.
var (
	_ provider.Provider      = (*Adapter)(nil)
	_ provider.Payments      = (*Adapter)(nil)
	_ provider.Verifications = (*Adapter)(nil)
	_ provider.Payouts       = (*Adapter)(nil)
	_ provider.BINSource     = (*Adapter)(nil)
	_ provider.HostedPages   = (*Adapter)(nil)
)

// NewAdapter returns an adapter for the sandbox at baseURL, authenticating
// with apiKey. A nil client gets one with a 30 s timeout; Paygate passes its
// own, whose timeout decides when an answer counts as lost.
func NewAdapter(baseURL, apiKey string, client *http.Client) *Adapter {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	for len(baseURL) > 0 && baseURL[len(baseURL)-1] == '/' {
		baseURL = baseURL[:len(baseURL)-1]
	}
	return &Adapter{Profiles: wire.DefaultProfiles(), name: Name, base: baseURL, key: apiKey, client: client, now: time.Now}
}

// Name implements provider.Provider: the account's name, Name for the
// built-in one.
func (a *Adapter) Name() string { return a.name }

// Capabilities implements provider.Provider; "" is the default profile.
func (a *Adapter) Capabilities(profile string) (provider.Capabilities, error) {
	caps, ok := a.Profiles[orWord(profile, wire.ProfileDefault)]
	if !ok {
		return nil, provider.Errorf(provider.Invalid, "no sandbox profile %q", profile)
	}
	return slices.Clone(caps), nil
}

// need checks capabilities before anything is sent: a missing one is
// Unsupported without a round trip.
func (a *Adapter) need(profile string, caps ...provider.Capability) error {
	have, err := a.Capabilities(profile)
	if err != nil {
		return err
	}
	for _, c := range caps {
		if c != "" && !have.Has(c) {
			return provider.Errorf(provider.Unsupported, "sandbox profile %q lacks %s", orWord(profile, wire.ProfileDefault), c)
		}
	}
	return nil
}

func required(fields ...string) error {
	for _, f := range fields {
		if f == "" {
			return provider.Errorf(provider.Invalid, "an operation id and, for an existing resource, its provider id are required")
		}
	}
	return nil
}

// Pay implements provider.Payments.
func (a *Adapter) Pay(ctx context.Context, r provider.PayRequest) (provider.PayResult, error) {
	if err := required(r.OperationID); err != nil {
		return provider.PayResult{}, err
	}
	m, extra, err := wireMethodOf(r.Instrument)
	if err != nil {
		return provider.PayResult{}, err
	}
	intent, need := "charge", provider.Charge
	if r.Authorize {
		intent, need = "authorize", provider.Authorize
		if m.Type == "mobile" { // the operator settles at once
			return provider.PayResult{}, provider.Errorf(provider.Unsupported, "a mobile payment cannot be authorized")
		}
	}
	var save provider.Capability
	if r.SaveCard {
		save = provider.SavedCards
	}
	if err := a.need(r.Profile, need, extra, save); err != nil {
		return provider.PayResult{}, err
	}
	req := wire.PaymentRequest{Intent: intent, AmountMinor: r.AmountMinor, Currency: r.Currency,
		OrderID: r.OrderID, Description: r.Description, Method: m, Customer: wireCustomerOf(r.Customer),
		Browser: wireBrowserOf(r.Browser), Locale: r.Locale, ReturnURL: r.ReturnURL, SaveCard: r.SaveCard}
	return a.payment(ctx, http.MethodPost, "/v1/payments", r.Profile, r.OperationID, req)
}

// Capture implements provider.Payments.
func (a *Adapter) Capture(ctx context.Context, r provider.CaptureRequest) (provider.PayResult, error) {
	if err := firstErr(required(r.OperationID, r.ProviderID), a.need(r.Profile, provider.Capture)); err != nil {
		return provider.PayResult{}, err
	}
	return a.payment(ctx, http.MethodPost, paymentPath(r.ProviderID, "capture"), r.Profile, r.OperationID,
		wire.AmountRequest{AmountMinor: r.AmountMinor})
}

// Cancel implements provider.Payments.
func (a *Adapter) Cancel(ctx context.Context, r provider.CancelRequest) (provider.PayResult, error) {
	if err := firstErr(required(r.OperationID, r.ProviderID), a.need(r.Profile, provider.Cancel)); err != nil {
		return provider.PayResult{}, err
	}
	return a.payment(ctx, http.MethodPost, paymentPath(r.ProviderID, "cancel"), r.Profile, r.OperationID, nil)
}

// Refund implements provider.Payments. The default profile has no refund
// (docs/design/decisions.md section 7): Unsupported, and nothing is sent.
func (a *Adapter) Refund(ctx context.Context, r provider.RefundRequest) (provider.PayResult, error) {
	if err := firstErr(required(r.OperationID, r.ProviderID), a.need(r.Profile, provider.Refund)); err != nil {
		return provider.PayResult{}, err
	}
	return a.payment(ctx, http.MethodPost, paymentPath(r.ProviderID, "refunds"), r.Profile, r.OperationID,
		wire.AmountRequest{AmountMinor: r.AmountMinor})
}

// Confirm implements provider.Payments. With a code it submits the code;
// without one it asks for the outcome of a 3DS step by reading the payment,
// so that asking twice never replays a stale answer.
func (a *Adapter) Confirm(ctx context.Context, r provider.ConfirmRequest) (provider.PayResult, error) {
	if r.Code == "" {
		if err := required(r.ProviderID); err != nil {
			return provider.PayResult{}, err
		}
		return a.payment(ctx, http.MethodGet, paymentPath(r.ProviderID, ""), r.Profile, "", nil)
	}
	if err := required(r.OperationID, r.ProviderID); err != nil {
		return provider.PayResult{}, err
	}
	return a.payment(ctx, http.MethodPost, paymentPath(r.ProviderID, "confirm"), r.Profile, r.OperationID,
		wire.CodeRequest{Code: r.Code})
}

// Status implements provider.Payments: the outcome of a payment operation
// (pay, capture, cancel, refund, confirm, hosted session) by its operation
// id. NotFound means the sandbox never carried it out.
func (a *Adapter) Status(ctx context.Context, r provider.StatusRequest) (provider.PayResult, error) {
	if err := required(r.OperationID); err != nil {
		return provider.PayResult{}, err
	}
	var raw json.RawMessage
	if err := a.do(ctx, http.MethodGet, "/v1/operations/"+url.PathEscape(r.OperationID), r.Profile, "", nil, &raw); err != nil {
		return provider.PayResult{}, err
	}
	var probe struct {
		Object string `json:"object"`
	}
	_ = json.Unmarshal(raw, &probe) // raw is valid JSON: do checked it
	switch probe.Object {
	case "payment":
		var v wire.PaymentView
		if json.Unmarshal(raw, &v) != nil {
			return provider.PayResult{}, unreadable("payment")
		}
		return payResult(v)
	case "hosted_session":
		var v wire.SessionView
		if json.Unmarshal(raw, &v) != nil {
			return provider.PayResult{}, unreadable("hosted session")
		}
		return sessionResult(v)
	case "verification", "payout":
		return provider.PayResult{}, provider.Errorf(provider.Invalid, "operation %s is a %s, not a payment", r.OperationID, probe.Object)
	}
	return provider.PayResult{}, unreadable("operation")
}

func (a *Adapter) payment(ctx context.Context, method, path, profile, key string, in any) (provider.PayResult, error) {
	var v wire.PaymentView
	if in == nil && method == http.MethodPost {
		in = struct{}{}
	}
	if err := a.do(ctx, method, path, profile, key, in, &v); err != nil {
		return provider.PayResult{}, err
	}
	return payResult(v)
}

func paymentPath(id, action string) string {
	p := "/v1/payments/" + url.PathEscape(id)
	if action != "" {
		p += "/" + action
	}
	return p
}

// BIN implements provider.BINSource. Only a 6- or 8-digit BIN ever goes into
// the URL: anything longer might be a card number, and is refused here.
func (a *Adapter) BIN(ctx context.Context, bin string) (provider.BINInfo, error) {
	if (len(bin) != 6 && len(bin) != 8) || !card.Digits(bin) {
		return provider.BINInfo{}, provider.Errorf(provider.Invalid, "a BIN is 6 or 8 digits")
	}
	var v wire.BINView
	if err := a.do(ctx, http.MethodGet, "/v1/bins/"+bin, "", "", nil, &v); err != nil {
		return provider.BINInfo{}, err
	}
	if v.Object != "bin" || v.BIN != bin {
		return provider.BINInfo{}, unreadable("BIN")
	}
	return provider.BINInfo{BIN: v.BIN, Scheme: v.Scheme, Type: v.Type, Level: v.Level, Issuer: v.Issuer,
		Country: v.Country, CountryCode: v.CountryCode, IssuerWebsite: v.IssuerWebsite, IssuerPhone: v.IssuerPhone}, nil
}

// HostedSession implements provider.HostedPages: the sandbox's own checkout
// page. Status(OperationID) later reports the payment made on it, pending
// until the payer pays.
func (a *Adapter) HostedSession(ctx context.Context, r provider.HostedSessionRequest) (provider.HostedSessionResult, error) {
	intent, need := "charge", provider.Charge
	if r.Authorize {
		intent, need = "authorize", provider.Authorize
	}
	if err := firstErr(required(r.OperationID), a.need(r.Profile, provider.HostedPage, need)); err != nil {
		return provider.HostedSessionResult{}, err
	}
	req := wire.SessionRequest{Intent: intent, AmountMinor: r.AmountMinor, Currency: r.Currency, OrderID: r.OrderID,
		Description: r.Description, Locale: r.Locale, ReturnURL: r.ReturnURL}
	var v wire.SessionView
	if err := a.do(ctx, http.MethodPost, "/v1/hosted-sessions", r.Profile, r.OperationID, req, &v); err != nil {
		return provider.HostedSessionResult{}, err
	}
	if v.Object != "hosted_session" || v.ID == "" || v.URL == "" {
		return provider.HostedSessionResult{}, unreadable("hosted session")
	}
	return provider.HostedSessionResult{ProviderID: v.ID, URL: v.URL}, nil
}

// Ledger reads the sandbox's ledger over HTTP, for tests that run the
// sandbox in another process; count in it with Count.
func (a *Adapter) Ledger(ctx context.Context) ([]wire.Entry, error) {
	var v wire.LedgerView
	if err := a.do(ctx, http.MethodGet, "/v1/ledger", "", "", nil, &v); err != nil {
		return nil, err
	}
	return v.Entries, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func unreadable(what string) error {
	return provider.Errorf(provider.Unreadable, "the sandbox's %s answer could not be understood", what)
}

// The sandbox's ledger is its records (reconciliation).
var _ provider.Records = (*Adapter)(nil)

// Movements implements provider.Records from the sandbox's ledger
// (GET /v1/ledger?from=&to=). A charge, hold or transfer answers the
// operation that created its resource; a capture, refund or cancel's
// release the operation whose request made it. Releases the acquirer made
// by itself (a partial capture's rest, an expiry, a verification's end)
// and verification holds are not Paygate's movements, and are left out.
func (a *Adapter) Movements(ctx context.Context, from, to time.Time, fn func(provider.Movement) error) error {
	var after int64
	for {
		var v wire.LedgerView
		q := url.Values{"from": {from.UTC().Format(time.RFC3339Nano)}, "to": {to.UTC().Format(time.RFC3339Nano)},
			"after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(ledgerPage)}}
		if err := a.do(ctx, http.MethodGet, "/v1/ledger?"+q.Encode(), "", "", nil, &v); err != nil {
			return err
		}
		if err := movements(v.Entries, fn); err != nil {
			return err
		}
		if !v.HasMore || len(v.Entries) == 0 {
			return nil
		}
		last := v.Entries[len(v.Entries)-1].Seq
		if last <= after {
			return provider.Errorf(provider.Unreadable, "sandbox ledger: a page that does not move on (after %d)", after)
		}
		after = last
	}
}

// ledgerPage is how many ledger entries Movements reads at once.
const ledgerPage = 1000

// movements calls fn with the movements of a page of ledger entries.
func movements(entries []wire.Entry, fn func(provider.Movement) error) error {
	for _, e := range entries {
		m := provider.Movement{Kind: e.Kind, OperationID: e.OperationID, Ref: fmt.Sprintf("%s#%d", e.ResourceID, e.Seq),
			PaymentRef: e.ResourceID, AmountMinor: e.AmountMinor, Currency: e.Currency, At: e.At}
		switch e.Kind {
		case wire.EntryCharge, wire.EntryHold, wire.EntryTransfer:
		case wire.EntryCapture, wire.EntryRefund:
			m.OperationID = e.CausedBy
		case wire.EntryRelease:
			if e.Reason != "canceled" {
				continue
			}
			m.OperationID = e.CausedBy
		default:
			continue
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Plant writes an entry into the sandbox's ledger behind Paygate's back
// (POST /v1/ledger, sandbox only): how reconciliation's tests make the
// breaks it must find.
func (a *Adapter) Plant(ctx context.Context, e wire.Entry) (wire.Entry, error) {
	var out wire.Entry
	err := a.do(ctx, http.MethodPost, "/v1/ledger", "", "", e, &out)
	return out, err
}
