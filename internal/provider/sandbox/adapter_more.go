package sandbox

import (
	"context"
	"net/http"
	"net/url"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// CreateVerification implements provider.Verifications.
func (a *Adapter) CreateVerification(ctx context.Context, r provider.VerificationRequest) (provider.VerificationResult, error) {
	if err := firstErr(required(r.OperationID), a.need(r.Profile, provider.Lookup)); err != nil {
		return provider.VerificationResult{}, err
	}
	req := wire.VerificationRequest{OrderID: r.OrderID, Currency: r.Currency, Card: wireCardOf(r.Card)}
	return a.verification(ctx, http.MethodPost, "/v1/verifications", r.Profile, r.OperationID, req)
}

// Verify implements provider.Verifications. The answer already counts this
// attempt.
func (a *Adapter) Verify(ctx context.Context, r provider.VerifyRequest) (provider.VerificationResult, error) {
	if err := required(r.OperationID, r.ProviderID, r.Code); err != nil {
		return provider.VerificationResult{}, err
	}
	return a.verification(ctx, http.MethodPost, "/v1/verifications/"+url.PathEscape(r.ProviderID)+"/verify",
		r.Profile, r.OperationID, wire.CodeRequest{Code: r.Code})
}

// ReleaseVerification implements provider.VerificationReleases.
func (a *Adapter) ReleaseVerification(ctx context.Context, r provider.ReleaseRequest) (provider.VerificationResult, error) {
	if err := required(r.OperationID, r.ProviderID); err != nil {
		return provider.VerificationResult{}, err
	}
	return a.verification(ctx, http.MethodPost, "/v1/verifications/"+url.PathEscape(r.ProviderID)+"/release",
		r.Profile, r.OperationID, struct{}{})
}

// VerificationStatus implements provider.Verifications, by the operation id that
// created the verification.
func (a *Adapter) VerificationStatus(ctx context.Context, r provider.StatusRequest) (provider.VerificationResult, error) {
	if err := required(r.OperationID); err != nil {
		return provider.VerificationResult{}, err
	}
	return a.verification(ctx, http.MethodGet, "/v1/verifications/by-operation/"+url.PathEscape(r.OperationID),
		r.Profile, "", nil)
}

func (a *Adapter) verification(ctx context.Context, method, path, profile, key string, in any) (provider.VerificationResult, error) {
	var v wire.VerificationView
	if err := a.do(ctx, method, path, profile, key, in, &v); err != nil {
		return provider.VerificationResult{}, err
	}
	return verificationResult(v)
}

// CreatePayout implements provider.Payouts. Payouts go to cards, saved
// cards and wallets; a phone is Unsupported.
func (a *Adapter) CreatePayout(ctx context.Context, r provider.PayoutRequest) (provider.PayoutResult, error) {
	if err := required(r.OperationID); err != nil {
		return provider.PayoutResult{}, err
	}
	m, extra, err := wireMethodOf(r.Instrument)
	if err != nil {
		return provider.PayoutResult{}, err
	}
	if m.Type == "mobile" {
		return provider.PayoutResult{}, provider.Errorf(provider.Unsupported, "the sandbox pays out to cards and wallets only")
	}
	if err := a.need(r.Profile, provider.Debit, extra); err != nil {
		return provider.PayoutResult{}, err
	}
	req := wire.PayoutRequest{OrderID: r.OrderID, AmountMinor: r.AmountMinor, Currency: r.Currency, Account: r.Account,
		Description: r.Description, Method: m, Customer: wireCustomerOf(r.Customer), Browser: wireBrowserOf(r.Browser),
		ReturnURL: r.ReturnURL}
	return a.payout(ctx, http.MethodPost, "/v1/payouts", r.Profile, r.OperationID, req)
}

// ConfirmPayout implements provider.Payouts: with a code it submits the
// one-time code of a challenged payout; without one it reads the payout
// (the outcome of a 3DS page).
func (a *Adapter) ConfirmPayout(ctx context.Context, r provider.ConfirmRequest) (provider.PayoutResult, error) {
	if r.Code == "" {
		if err := required(r.ProviderID); err != nil {
			return provider.PayoutResult{}, err
		}
		return a.payout(ctx, http.MethodGet, "/v1/payouts/"+url.PathEscape(r.ProviderID), r.Profile, "", nil)
	}
	if err := required(r.OperationID, r.ProviderID); err != nil {
		return provider.PayoutResult{}, err
	}
	return a.payout(ctx, http.MethodPost, "/v1/payouts/"+url.PathEscape(r.ProviderID)+"/confirm",
		r.Profile, r.OperationID, wire.CodeRequest{Code: r.Code})
}

// PayoutStatus implements provider.Payouts, by the operation id that
// created the payout.
func (a *Adapter) PayoutStatus(ctx context.Context, r provider.StatusRequest) (provider.PayoutResult, error) {
	if err := required(r.OperationID); err != nil {
		return provider.PayoutResult{}, err
	}
	return a.payout(ctx, http.MethodGet, "/v1/payouts/by-operation/"+url.PathEscape(r.OperationID), r.Profile, "", nil)
}

func (a *Adapter) payout(ctx context.Context, method, path, profile, key string, in any) (provider.PayoutResult, error) {
	var v wire.PayoutView
	if err := a.do(ctx, method, path, profile, key, in, &v); err != nil {
		return provider.PayoutResult{}, err
	}
	return payoutResult(v)
}
