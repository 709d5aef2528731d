package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
)

// keyNow is the time by the clock of the key whose request ctx carries
// (docs/design/decisions.md section 14).
func (s *Server) keyNow(ctx context.Context) time.Time { return clock.Now(ctx, s.now) }

// createSubscription is createSubscription (POST /subscriptions).
func (s *Server) createSubscription() http.Handler {
	return write(s, writeSpec{schema: "CreateSubscription"},
		func(ctx context.Context, tx *store.Tx, c *call, in *openapi.CreateSubscription) (answer, error) {
			n := subscription.New{MandateID: in.MandateID, AmountMinor: in.AmountMinor, Currency: in.Currency,
				Interval: subscription.Interval{Unit: in.IntervalUnit, Count: in.IntervalCount}}
			if in.FirstRunAt != nil {
				t := in.FirstRunAt.Std()
				n.FirstRunAt = &t
			}
			sub, err := s.subscriptions.Create(ctx, tx, c.key, n)
			if err != nil {
				return answer{}, err
			}
			return answer{http.StatusCreated, subscriptionView(sub)}, nil
		})
}

// getSubscription is getSubscription (GET /subscriptions/{id}); another
// key's subscription is 404.
func (s *Server) getSubscription() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		sub, err := byID(ctx, c, s.subscriptions.FindForKey)
		if err != nil {
			return answer{}, err
		}
		return answer{http.StatusOK, subscriptionView(sub)}, nil
	})
}

// actOnSubscription serves pauseSubscription (POST
// /subscriptions/{id}/pause), resumeSubscription (POST
// /subscriptions/{id}/resume) and cancelSubscription (POST
// /subscriptions/{id}/cancel): no body (an empty object at most).
func (s *Server) actOnSubscription(a subscription.Action) http.Handler {
	return write(s, writeSpec{optional: true},
		func(ctx context.Context, tx *store.Tx, c *call, _ *struct{}) (answer, error) {
			id, err := pathID(c.r)
			if err != nil {
				return answer{}, err
			}
			sub, err := s.subscriptions.Act(ctx, tx, c.key.ID, id, a)
			if err != nil {
				return answer{}, err
			}
			return answer{http.StatusOK, subscriptionView(sub)}, nil
		})
}

// subscriptionView is the Subscription answer (OpenAPI schema Subscription).
func subscriptionView(sub *subscription.Subscription) openapi.Subscription {
	out := openapi.Subscription{ID: sub.ID, MandateID: sub.MandateID, AmountMinor: sub.AmountMinor,
		Currency: sub.Currency, IntervalUnit: sub.Interval.Unit, IntervalCount: sub.Interval.Count,
		Status: string(sub.Status), CreatedAt: openapi.Time(sub.CreatedAt), UpdatedAt: openapi.Time(sub.UpdatedAt),
		NextPeriod: sub.Period, FailedAttempts: sub.Attempt, LastDeclineCode: sub.LastDeclineCode}
	if sub.NextRunAt != nil {
		out.NextRunAt = openapi.Time(*sub.NextRunAt)
	}
	return out
}

// getMandate is getMandate (GET /mandates/{id}); another key's mandate is
// 404.
func (s *Server) getMandate() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		m, err := byID(ctx, c, s.subscriptions.FindMandateForKey)
		if err != nil {
			return answer{}, err
		}
		return answer{http.StatusOK, mandateView(m)}, nil
	})
}

// mandateView is the Mandate answer (OpenAPI schema Mandate): the card only
// masked.
func mandateView(m *subscription.Mandate) openapi.Mandate {
	out := openapi.Mandate{ID: m.ID, Status: string(m.Status), PaymentID: m.PaymentID,
		CustomerReference: m.CustomerReference, DisclosureVersion: m.DisclosureVersion, SavedCardID: m.SavedCardID,
		CardMask: m.CardMask, CardExpireMonth: m.CardExpMonth, CardExpireYear: m.CardExpYear,
		CreatedAt: openapi.Time(m.CreatedAt), UpdatedAt: openapi.Time(m.UpdatedAt)}
	if m.ConsentAt != nil {
		out.ConsentAt = openapi.Time(*m.ConsentAt)
	}
	if len(m.Evidence) > 0 {
		var ev subscription.Evidence
		if json.Unmarshal(m.Evidence, &ev) == nil {
			out.Consent = &openapi.MandateEvidence{Channel: ev.Channel, ConsentBox: ev.ConsentBox,
				PayerIP: ev.PayerIP, UserAgent: ev.UserAgent}
		}
	}
	return out
}

// getSandboxClock is getSandboxClock (GET /sandbox/clock): the calling
// key's clock; 404 for a production key (docs/design/decisions.md section
// 14).
func (s *Server) getSandboxClock() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		if c.key.Environment != merchant.Sandbox {
			return answer{}, fault.New(fault.NotFound, "the sandbox clock exists for sandbox keys only")
		}
		return answer{http.StatusOK, openapi.SandboxClock{Now: openapi.Time(s.keyNow(ctx)),
			OffsetSeconds: int64(c.key.ClockOffset / time.Second)}}, nil
	})
}

// advanceInProgress is the status kept with an advance's Idempotency-Key
// while it runs: the stored body is then {"target"}, so that a retry of a
// request still running (a client's timeout) goes to the same time.
const advanceInProgress = 102

// advanceSandboxClock is advanceSandboxClock (POST /sandbox/clock/advance)
// (docs/design/decisions.md section 14). Unlike other writes it works
// before its answer is stored: it runs what falls due, each in its own
// transaction, and waits for provider outcomes. So the nonce is spent
// first; the target is made absolute and kept with the Idempotency-Key
// before the clock moves, so a retry while the first still runs (a
// `seconds` request included) goes to the same time, not further; and a
// finished answer is replayed without advancing again.
func (s *Server) advanceSandboxClock() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.front(w, r)
		if !ok {
			return
		}
		ctx := c.r.Context()
		if err := s.admit(ctx, s.store, c.key, c.nonce); err != nil {
			s.failErr(w, r, err)
			return
		}
		if c.key.Environment != merchant.Sandbox || s.clock == nil {
			s.fail(w, r, fault.New(fault.NotFound, "the sandbox clock exists for sandbox keys only"))
			return
		}
		in := new(openapi.SandboxClockAdvance)
		idemKey, f := s.checkWrite(r, c, writeSpec{schema: "SandboxClockAdvance"}, in)
		if f != nil {
			s.fail(w, r, f)
			return
		}
		fp := fingerprint(c.r, c.body)
		prior, err := s.store.FindIdempotentResponse(ctx, c.key.ID, idemKey)
		var target time.Time
		switch {
		case err == nil && prior.Fingerprint != fp:
			s.fail(w, r, fault.OnField(fault.IdempotencyKeyReused, "Idempotency-Key",
				"this Idempotency-Key was used with another request"))
			return
		case err == nil && prior.StatusCode != advanceInProgress:
			w.Header().Set("Idempotent-Replayed", "true")
			writeJSON(w, prior.StatusCode, prior.Body)
			return
		case err == nil:
			var p struct{ Target time.Time }
			if err := json.Unmarshal(prior.Body, &p); err != nil {
				s.failErr(w, r, err)
				return
			}
			target = p.Target
		case errors.Is(err, store.ErrNotFound):
			if target, f = s.advanceTarget(ctx, in); f != nil {
				s.fail(w, r, f)
				return
			}
			if target, err = s.claimAdvance(ctx, c.key.ID, idemKey, fp, target); err != nil {
				s.failErr(w, r, err)
				return
			}
		default:
			s.failErr(w, r, err)
			return
		}
		at, ran, err := s.clock.Advance(ctx, c.key.ID, target)
		s.keys.forget(c.key.AccessKey) // its next request reads the new offset
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		body := mustJSON(openapi.SandboxClockAdvanced{Now: openapi.Time(at), Ran: ran})
		if err := s.store.InTx(ctx, func(tx *store.Tx) error {
			return tx.UpdateIdempotentResponse(ctx, c.key.ID, idemKey, http.StatusOK, body)
		}); err != nil {
			s.failErr(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, body)
	})
}

// maxAdvanceSeconds bounds `seconds` before it becomes a duration: more
// than 5 years is refused anyway, and a larger number would overflow.
const maxAdvanceSeconds = 6 * 366 * 24 * 3600

// advanceTarget is the time an advance goes to, by the key's clock in
// ctx: exactly one of `to` and `seconds`, forward only, at most 5 years
// (docs/design/decisions.md section 14).
func (s *Server) advanceTarget(ctx context.Context, in *openapi.SandboxClockAdvance) (time.Time, *fault.Error) {
	now := s.keyNow(ctx)
	field := "to"
	var target time.Time
	switch {
	case (in.To == nil) == (in.Seconds == nil):
		return now, fault.OnField(fault.ValidationError, "to", "send exactly one of to and seconds")
	case in.To != nil:
		target = in.To.Std().UTC()
	case *in.Seconds > maxAdvanceSeconds:
		return now, fault.OnField(fault.ValidationError, "seconds", "at most 5 years a call")
	default:
		field, target = "seconds", now.Add(time.Duration(*in.Seconds)*time.Second)
	}
	switch {
	case target.Before(now):
		return now, fault.OnField(fault.ValidationError, field, "the clock only moves forward: "+now.Format(time.RFC3339)+" is its time")
	case target.After(clock.Furthest(now)):
		return now, fault.OnField(fault.ValidationError, field, "at most 5 years a call")
	}
	return target, nil
}

// claimAdvance keeps the advance's target with its Idempotency-Key, in
// its own transaction, before the clock moves; when a concurrent request
// with the same key claimed it first, its target is the one to go to.
func (s *Server) claimAdvance(ctx context.Context, keyID, idemKey, fp string, target time.Time) (time.Time, error) {
	body := mustJSON(map[string]time.Time{"target": target})
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		return tx.SaveIdempotentResponse(ctx, keyID, idemKey, store.StoredResponse{Fingerprint: fp,
			StatusCode: advanceInProgress, Body: body, CreatedAt: s.now()})
	})
	if !errors.Is(store.Classify(err), store.ErrDuplicate) {
		return target, err
	}
	prior, err := s.store.FindIdempotentResponse(ctx, keyID, idemKey)
	if err != nil {
		return target, err
	}
	if prior.Fingerprint != fp {
		return target, fault.OnField(fault.IdempotencyKeyReused, "Idempotency-Key",
			"this Idempotency-Key was used with another request")
	}
	var p struct{ Target time.Time }
	if err := json.Unmarshal(prior.Body, &p); err != nil || prior.StatusCode != advanceInProgress {
		return target, err // finished meanwhile: going to the same target again does nothing
	}
	return p.Target, nil
}
