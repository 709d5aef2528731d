package stripe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	sdk "github.com/stripe/stripe-go/v85"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/circuit"
)

// observedKey carries, in a call's context, where the transport records
// the HTTP status of Stripe's answer: the SDK reports an unreadable body
// without it.
type observedKey struct{}

type observed struct{ status int }

// observe returns ctx carrying a place for the answer's status.
func observe(ctx context.Context) (context.Context, *observed) {
	o := &observed{}
	return context.WithValue(ctx, observedKey{}, o), o
}

// transport records each answer's status where the request's context says.
type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(r)
	if o, ok := r.Context().Value(observedKey{}).(*observed); ok && res != nil {
		o.status = res.StatusCode
	}
	return res, err
}

// classify turns a failed call into the seam's error vocabulary
// (docs/providers/stripe.md, "Errors"). It never quotes Stripe's message
// or the request: both may describe the card. A card error is not here:
// it is a decline, a result.
func classify(err error, o *observed) *provider.Error {
	var se *sdk.Error
	if errors.As(err, &se) {
		kind := provider.Invalid
		switch code := se.HTTPStatusCode; {
		case code == http.StatusTooManyRequests:
			kind = provider.RateLimited
		case code == http.StatusNotFound && se.Code == sdk.ErrorCodeResourceMissing:
			kind = provider.NotFound
		case code == http.StatusConflict, se.Type == sdk.ErrorTypeIdempotency:
			// The same key is being carried out right now, or was used
			// already: the first request may have done something. Ask.
			kind = provider.OutcomeUnknown
		case code == http.StatusServiceUnavailable:
			kind = provider.Transient
		case code >= 500: // carried out or not: ask
			kind = provider.OutcomeUnknown
		}
		return &provider.Error{Kind: kind, Message: "Stripe answered " + http.StatusText(se.HTTPStatusCode) +
			" (" + string(se.Type) + safeCode(string(se.Code)) + ")"}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &provider.Error{Kind: provider.OutcomeUnknown, Message: "no answer from Stripe in time"}
	}
	if errors.Is(err, circuit.ErrOpen) {
		return &provider.Error{Kind: provider.Transient, Message: "not sent: the account's circuit is open", Err: circuit.ErrOpen, Unsent: true}
	}
	if circuit.Unreached(err) {
		return &provider.Error{Kind: provider.Transient, Message: "Stripe could not be reached", Err: safeNetErr(err), Unsent: true}
	}
	if strings.HasPrefix(err.Error(), "Couldn't deserialize JSON") || o.status != 0 {
		switch {
		case o.status == http.StatusServiceUnavailable:
			return &provider.Error{Kind: provider.Transient, Message: "Stripe is unavailable (an unreadable 503)"}
		case o.status >= 500:
			return &provider.Error{Kind: provider.OutcomeUnknown, Message: "Stripe answered an unreadable " + http.StatusText(o.status)}
		}
		return &provider.Error{Kind: provider.Unreadable, Message: "Stripe's answer could not be read"}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &provider.Error{Kind: provider.OutcomeUnknown, Message: "no answer from Stripe in time"}
	}
	return &provider.Error{Kind: provider.OutcomeUnknown, Message: "the call to Stripe broke off", Err: safeNetErr(err)}
}

// safeNetErr keeps a network error's kind for the log, not its text
// beyond the operation (a URL holds no card data, but a proxy's message
// might hold anything).
func safeNetErr(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return errors.New(op.Op + " " + op.Net)
	}
	return nil
}

func safeCode(c string) string {
	if c == "" {
		return ""
	}
	return ", " + c
}
