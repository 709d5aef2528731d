package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
)

// createSession is createPaymentSession (POST /payment-sessions).
func (s *Server) createSession() http.Handler {
	return write(s, writeSpec{schema: "CreatePayment"},
		func(ctx context.Context, tx *store.Tx, c *call, in *openapi.CreatePayment) (answer, error) {
			p, err := s.payments.CreateSession(ctx, tx, c.key, newSession(in))
			if err != nil {
				return answer{}, err
			}
			return answer{http.StatusCreated, s.paymentViewAt(p, s.keyNow(ctx))}, nil
		})
}

// getSession is getPaymentSession (GET /payment-sessions/{id}); another
// key's session is 404.
func (s *Server) getSession() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		p, err := byID(ctx, c, s.payments.FindSessionForKey)
		if err != nil {
			return answer{}, err
		}
		return answer{http.StatusOK, s.paymentViewAt(p, s.keyNow(ctx))}, nil
	})
}

// listChannels is listPaymentChannels (GET /payment-channels): the calling
// key's channels only.
func (s *Server) listChannels() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		cs, err := s.merchants.Channels(ctx, c.key.ID)
		if err != nil {
			return answer{}, err
		}
		out := openapi.PaymentChannelList{Items: []openapi.PaymentChannel{}}
		for _, ch := range cs {
			out.Items = append(out.Items, openapi.PaymentChannel{ID: ch.ID, Alias: ch.Alias,
				PaymentMethods: ch.PaymentMethods, Currencies: ch.Currencies, CheckoutMode: ch.CheckoutMode})
		}
		return answer{http.StatusOK, out}, nil
	})
}

// pathID reads the {id} of the path: a uuid, else 404 (an id that cannot
// exist is as unknown as one that does not).
func pathID(r *http.Request) (string, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil || len(r.PathValue("id")) != 36 {
		return "", fault.New(fault.NotFound, "no resource with this id")
	}
	return id.String(), nil
}

// byID is the calling key's resource named by the path's {id}, found by
// find, a service's FindForKey: 404 for an id that cannot exist (pathID),
// and from find for another key's or one that does not.
func byID[T any](ctx context.Context, c *call, find func(ctx context.Context, keyID, id string) (T, error)) (T, error) {
	id, err := pathID(c.r)
	if err != nil {
		var zero T
		return zero, err
	}
	return find(ctx, c.key.ID, id)
}

// newSession turns the wire request into the domain's.
func newSession(in *openapi.CreatePayment) payment.NewSession {
	n := payment.NewSession{
		OrderID: in.OrderID, AmountMinor: in.AmountMinor, Currency: in.Currency,
		Description: deref(in.Description), CustomerReference: deref(in.CustomerReference),
		ReturnURL: deref(in.ReturnURL), Locale: deref(in.Locale),
		SavePaymentMethod: in.SavePaymentMethod != nil && *in.SavePaymentMethod,
		Customer:          customer(in.Customer), Subscription: subscriptionTerms(in.Subscription),
	}
	if in.ExpiresInSeconds != nil {
		n.ExpiresIn = time.Duration(*in.ExpiresInSeconds) * time.Second
	}
	if in.Metadata != nil {
		n.Metadata, _ = json.Marshal(in.Metadata) // re-encoding decoded JSON cannot fail
	}
	return n
}

func customer(c *openapi.Customer) *instrument.Customer {
	if c == nil {
		return nil
	}
	out := &instrument.Customer{FirstName: deref(c.FirstName), LastName: deref(c.LastName), Email: deref(c.Email), Phone: deref(c.Phone)}
	if a := c.BillingAddress; a != nil {
		out.BillingAddress = &instrument.BillingAddress{Country: deref(a.Country), PostalCode: deref(a.PostalCode),
			Region: deref(a.Region), City: deref(a.City), Line1: deref(a.Line1), Line2: a.Line2, Line3: a.Line3}
	}
	return out
}

func subscriptionTerms(t *openapi.SubscriptionTerms) *payment.SubscriptionTerms {
	if t == nil {
		return nil
	}
	return &payment.SubscriptionTerms{IntervalUnit: t.IntervalUnit, IntervalCount: t.IntervalCount,
		FirstChargeAt: t.FirstChargeAt.Std().UTC(), DisclosureVersion: t.DisclosureVersion, Consent: t.Consent}
}

// paymentViewAt is the Payment answer (OpenAPI schema Payment) as the API shows
// it, at now (the key's clock for an answer: docs/design/decisions.md
// section 14).
func (s *Server) paymentViewAt(p *payment.Payment, now time.Time) openapi.Payment {
	return s.views.paymentAt(p, now)
}

// paymentAt is the Payment answer at now.
func (vw Views) paymentAt(p *payment.Payment, now time.Time) openapi.Payment {
	v := p.Observe(now)
	out := openapi.Payment{
		PaymentID: v.ID, SessionID: v.SessionID, Status: string(v.Status), Final: v.Status.Final(),
		MaskedCard: v.MaskedCard, PayerIP: v.PayerIP, CreatedAt: openapi.Time(v.CreatedAt), UpdatedAt: openapi.Time(v.UpdatedAt),
		OrderID: v.OrderID, AmountMinor: v.AmountMinor, Currency: v.Currency, Description: v.Description,
		CustomerReference: v.CustomerReference, Locale: v.Locale, OperationMode: v.OperationMode,
		PaymentMethod: v.Method, SavedCardID: v.SavedCardID, MandateID: v.MandateID, SubscriptionID: v.SubscriptionID,
	}
	if v.SubscriptionPeriod != nil {
		attempt := v.SubscriptionAttempt
		out.SubscriptionPeriod, out.SubscriptionAttempt = v.SubscriptionPeriod, &attempt
	}
	if v.SessionID != "" && !v.Status.Final() {
		out.CheckoutURL = vw.publicURL + "/checkout/" + v.SessionID
	}
	if v.ExpiresAt != nil {
		out.ExpiresAt = openapi.Time(*v.ExpiresAt)
	}
	if v.AuthorizationExpiresAt != nil {
		out.AuthorizationExpiresAt = openapi.Time(*v.AuthorizationExpiresAt)
	}
	if v.FirstName != "" || v.LastName != "" {
		out.Customer = &openapi.PaymentCustomer{FirstName: v.FirstName, LastName: v.LastName}
	}
	if len(v.Device) > 0 {
		out.Device = new(openapi.DeviceSnapshot)
		_ = json.Unmarshal(v.Device, out.Device)
	}
	if len(v.Metadata) > 0 {
		_ = json.Unmarshal(v.Metadata, &out.Metadata)
	}
	if v.DeclineCode != "" {
		out.Decline = &openapi.Decline{Code: v.DeclineCode, Message: v.DeclineMessage}
	}
	// next_action belongs to requires_action only: after a confirm the
	// payment is processing and the step it named is over.
	if v.NextActionType != "" && v.Status == payment.RequiresAction {
		out.NextAction = &openapi.NextAction{Type: v.NextActionType, URL: v.NextActionURL}
	}
	if v.BankReference != nil {
		out.BankReference = &openapi.BankReference{PaymentID: v.BankReference.PaymentID, Name: v.BankReference.Name}
	}
	if v.Kind == payment.KindDirect || v.CapturedAmountMinor > 0 {
		out.CapturedAmountMinor = &v.CapturedAmountMinor
	}
	if v.RefundedAmountMinor > 0 {
		out.RefundedAmountMinor = &v.RefundedAmountMinor
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
