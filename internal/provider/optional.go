package provider

import "context"

// PaymentsOf returns p's Payments. When p offers none, every method of the
// result answers an *Error of kind Unsupported and sends nothing, so a call
// site stays one line and an adapter without payments is handled like a
// profile without the capability. To ask whether p offers payments, use a
// type assertion: p.(Payments).
func PaymentsOf(p Provider) Payments {
	if x, ok := p.(Payments); ok {
		return x
	}
	return unsupported{p.Name(), "payments"}
}

// VerificationsOf returns p's Verifications, or one whose every method
// answers Unsupported (see PaymentsOf).
func VerificationsOf(p Provider) Verifications {
	if x, ok := p.(Verifications); ok {
		return x
	}
	return unsupported{p.Name(), "card verifications"}
}

// PayoutsOf returns p's Payouts, or one whose every method answers
// Unsupported (see PaymentsOf).
func PayoutsOf(p Provider) Payouts {
	if x, ok := p.(Payouts); ok {
		return x
	}
	return unsupported{p.Name(), "payouts"}
}

// BINSourceOf returns p's BINSource, or one that answers Unsupported (see
// PaymentsOf).
func BINSourceOf(p Provider) BINSource {
	if x, ok := p.(BINSource); ok {
		return x
	}
	return unsupported{p.Name(), "BIN lookups"}
}

// HostedPagesOf returns p's HostedPages, or one that answers Unsupported
// (see PaymentsOf).
func HostedPagesOf(p Provider) HostedPages {
	if x, ok := p.(HostedPages); ok {
		return x
	}
	return unsupported{p.Name(), "hosted pages"}
}

// unsupported stands in for an optional interface a provider lacks. Its
// error names the provider and the interface only: nothing of the request.
type unsupported struct{ name, what string }

func (u unsupported) err() error {
	return Errorf(Unsupported, "provider %s offers no %s", u.name, u.what)
}

func (u unsupported) Pay(context.Context, PayRequest) (PayResult, error) { return PayResult{}, u.err() }
func (u unsupported) Capture(context.Context, CaptureRequest) (PayResult, error) {
	return PayResult{}, u.err()
}
func (u unsupported) Cancel(context.Context, CancelRequest) (PayResult, error) {
	return PayResult{}, u.err()
}
func (u unsupported) Refund(context.Context, RefundRequest) (PayResult, error) {
	return PayResult{}, u.err()
}
func (u unsupported) Confirm(context.Context, ConfirmRequest) (PayResult, error) {
	return PayResult{}, u.err()
}
func (u unsupported) Status(context.Context, StatusRequest) (PayResult, error) {
	return PayResult{}, u.err()
}
func (u unsupported) CreateVerification(context.Context, VerificationRequest) (VerificationResult, error) {
	return VerificationResult{}, u.err()
}
func (u unsupported) Verify(context.Context, VerifyRequest) (VerificationResult, error) {
	return VerificationResult{}, u.err()
}
func (u unsupported) VerificationStatus(context.Context, StatusRequest) (VerificationResult, error) {
	return VerificationResult{}, u.err()
}
func (u unsupported) CreatePayout(context.Context, PayoutRequest) (PayoutResult, error) {
	return PayoutResult{}, u.err()
}
func (u unsupported) ConfirmPayout(context.Context, ConfirmRequest) (PayoutResult, error) {
	return PayoutResult{}, u.err()
}
func (u unsupported) PayoutStatus(context.Context, StatusRequest) (PayoutResult, error) {
	return PayoutResult{}, u.err()
}
func (u unsupported) BIN(context.Context, string) (BINInfo, error) { return BINInfo{}, u.err() }
func (u unsupported) HostedSession(context.Context, HostedSessionRequest) (HostedSessionResult, error) {
	return HostedSessionResult{}, u.err()
}
