package providertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
)

// unsupported: every capability the profile lacks is refused as
// Unsupported (provider.Unsupported), so Paygate tells the merchant instead
// of retrying; and the refusal moves no money.
func (s *suite) unsupported(t *testing.T) {
	e := s.env(t)
	ctx := context.Background()
	card := &provider.Instrument{Card: &provider.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2040, CVV: "987"}}
	if e.cfg.Succeeds != nil {
		card = e.cfg.Succeeds
	}
	calls := map[provider.Capability]func(op string) error{
		provider.Charge: func(op string) error {
			r := e.payReq(card, false)
			r.OperationID = op
			_, err := provider.PaymentsOf(e.p).Pay(ctx, r)
			return err
		},
		provider.Authorize: func(op string) error {
			r := e.payReq(card, true)
			r.OperationID = op
			_, err := provider.PaymentsOf(e.p).Pay(ctx, r)
			return err
		},
		provider.Capture: func(op string) error {
			_, err := provider.PaymentsOf(e.p).Capture(ctx, provider.CaptureRequest{OperationID: op, ProviderID: "pay_conformance", Profile: e.cfg.Profile})
			return err
		},
		provider.Cancel: func(op string) error {
			_, err := provider.PaymentsOf(e.p).Cancel(ctx, provider.CancelRequest{OperationID: op, ProviderID: "pay_conformance", Profile: e.cfg.Profile})
			return err
		},
		provider.Refund: func(op string) error {
			_, err := provider.PaymentsOf(e.p).Refund(ctx, provider.RefundRequest{OperationID: op, ProviderID: "pay_conformance", AmountMinor: 1, Profile: e.cfg.Profile})
			return err
		},
		provider.Lookup: func(op string) error {
			_, err := provider.VerificationsOf(e.p).CreateVerification(ctx, provider.VerificationRequest{OperationID: op, Currency: e.cfg.Currency, Card: *card.Card, Profile: e.cfg.Profile})
			return err
		},
		provider.Debit: func(op string) error {
			_, err := provider.PayoutsOf(e.p).CreatePayout(ctx, provider.PayoutRequest{OperationID: op, AmountMinor: e.cfg.AmountMinor, Currency: e.cfg.Currency, Instrument: *card, Profile: e.cfg.Profile})
			return err
		},
		provider.HostedPage: func(op string) error {
			_, err := provider.HostedPagesOf(e.p).HostedSession(ctx, provider.HostedSessionRequest{OperationID: op, AmountMinor: e.cfg.AmountMinor, Currency: e.cfg.Currency, ReturnURL: "https://merchant.example/return", Profile: e.cfg.Profile})
			return err
		},
	}
	lacking := 0
	for c, call := range calls {
		if e.caps.Has(c) || card.Card == nil {
			continue
		}
		lacking++
		t.Run(string(c), func(t *testing.T) {
			op := NewOperationID()
			err := call(op)
			kind(t, err, provider.Unsupported)
			e.clean(nil, err)
			e.moves(op, 0)
		})
	}
	if lacking == 0 {
		t.Skip("the profile lacks no capability the suite can call")
	}
}

func (s *suite) payments(t *testing.T) {
	ctx := context.Background()
	t.Run("unknown operation id is NotFound", func(t *testing.T) {
		e := s.env(t)
		_, err := provider.PaymentsOf(e.p).Status(ctx, provider.StatusRequest{OperationID: NewOperationID(), Profile: e.cfg.Profile})
		kind(t, err, provider.NotFound)
	})
	t.Run("charge succeeds once however often it is sent", func(t *testing.T) {
		e := s.env(t)
		e.need(provider.Charge)
		if e.cfg.Succeeds == nil {
			t.Skip("no Succeeds instrument")
		}
		pay := provider.PaymentsOf(e.p)
		r := e.payReq(e.cfg.Succeeds, false)
		first, err := pay.Pay(ctx, r)
		require.NoError(t, err)
		e.clean(first, nil)
		require.Equal(t, provider.StatusSucceeded, first.Status)
		require.NotEmpty(t, first.ProviderID)
		second, err := pay.Pay(ctx, r)
		require.NoError(t, err, "the same operation id again is a replay, not an error")
		require.Equal(t, first, second)
		status, err := pay.Status(ctx, provider.StatusRequest{OperationID: r.OperationID, Profile: e.cfg.Profile})
		require.NoError(t, err)
		e.clean(status, nil)
		require.Equal(t, first.Status, status.Status)
		require.Equal(t, first.ProviderID, status.ProviderID)
		e.moves(r.OperationID, 1)

		// The same operation id with another request is refused, not
		// carried out, and the error does not quote the card. It may be an
		// unknown outcome (Paygate then asks Status, which finds the first
		// request's), never a result of its own.
		other := r
		other.AmountMinor++
		_, err = pay.Pay(ctx, other)
		require.Error(t, err)
		e.clean(nil, err)
		e.moves(r.OperationID, 1)
	})
	t.Run("a decline is a result", func(t *testing.T) {
		e := s.env(t)
		e.need(provider.Charge)
		if e.cfg.Declines == nil {
			t.Skip("no Declines instrument")
		}
		r := e.payReq(e.cfg.Declines, false)
		res, err := provider.PaymentsOf(e.p).Pay(ctx, r)
		require.NoError(t, err)
		e.clean(res, nil)
		require.Equal(t, provider.StatusDeclined, res.Status)
		require.NotEmpty(t, res.DeclineCode)
		require.NotEmpty(t, res.DeclineMessage, "the adapter writes a payer-safe message")
		e.moves(r.OperationID, 0)
	})
	t.Run("3DS asks the payer to act", func(t *testing.T) {
		e := s.env(t)
		e.need(provider.Charge, provider.ThreeDS)
		if e.cfg.Challenge == nil {
			t.Skip("no Challenge instrument")
		}
		r := e.payReq(e.cfg.Challenge, false)
		res, err := provider.PaymentsOf(e.p).Pay(ctx, r)
		require.NoError(t, err)
		e.clean(res, nil)
		require.Equal(t, provider.StatusRequiresAction, res.Status)
		require.NotNil(t, res.NextAction)
		require.Equal(t, "three_ds", res.NextAction.Type)
		require.NotEmpty(t, res.NextAction.URL)
		// Asking for the outcome before the payer acted changes nothing.
		again, err := provider.PaymentsOf(e.p).Confirm(ctx, provider.ConfirmRequest{OperationID: NewOperationID(), ProviderID: res.ProviderID, Profile: e.cfg.Profile})
		require.NoError(t, err)
		require.Equal(t, provider.StatusRequiresAction, again.Status)
		e.moves(r.OperationID, 0)
	})
	t.Run("authorize then capture", func(t *testing.T) {
		e := s.env(t)
		e.need(provider.Authorize, provider.Capture)
		if e.cfg.Succeeds == nil {
			t.Skip("no Succeeds instrument")
		}
		pay := provider.PaymentsOf(e.p)
		auth, err := pay.Pay(ctx, e.payReq(e.cfg.Succeeds, true))
		require.NoError(t, err)
		e.clean(auth, nil)
		require.Equal(t, provider.StatusAuthorized, auth.Status)
		c := provider.CaptureRequest{OperationID: NewOperationID(), ProviderID: auth.ProviderID, AmountMinor: e.cfg.AmountMinor, Profile: e.cfg.Profile}
		res, err := pay.Capture(ctx, c)
		require.NoError(t, err)
		e.clean(res, nil)
		require.Equal(t, provider.StatusSucceeded, res.Status)
		require.Equal(t, e.cfg.AmountMinor, res.CapturedAmountMinor)
		again, err := pay.Capture(ctx, c)
		require.NoError(t, err, "the same capture again is a replay")
		require.Equal(t, res, again)
		e.moves(c.OperationID, 1)
		_, err = pay.Capture(ctx, provider.CaptureRequest{OperationID: NewOperationID(), ProviderID: auth.ProviderID, Profile: e.cfg.Profile})
		require.Error(t, err, "a second capture of one hold is refused")
		e.moves(auth.ProviderID, 2) // the hold and the one capture

		if e.caps.Has(provider.Refund) {
			rf := provider.RefundRequest{OperationID: NewOperationID(), ProviderID: auth.ProviderID, AmountMinor: 1, Profile: e.cfg.Profile}
			res, err := pay.Refund(ctx, rf)
			require.NoError(t, err)
			require.Equal(t, int64(1), res.RefundedAmountMinor)
			again, err := pay.Refund(ctx, rf)
			require.NoError(t, err, "the same refund again is a replay")
			require.Equal(t, res, again)
			e.moves(rf.OperationID, 1)
		}
	})
	t.Run("authorize then cancel", func(t *testing.T) {
		e := s.env(t)
		e.need(provider.Authorize, provider.Cancel)
		if e.cfg.Succeeds == nil {
			t.Skip("no Succeeds instrument")
		}
		pay := provider.PaymentsOf(e.p)
		auth, err := pay.Pay(ctx, e.payReq(e.cfg.Succeeds, true))
		require.NoError(t, err)
		require.Equal(t, provider.StatusAuthorized, auth.Status)
		c := provider.CancelRequest{OperationID: NewOperationID(), ProviderID: auth.ProviderID, Profile: e.cfg.Profile}
		res, err := pay.Cancel(ctx, c)
		require.NoError(t, err)
		e.clean(res, nil)
		require.Equal(t, provider.StatusCanceled, res.Status)
		again, err := pay.Cancel(ctx, c)
		require.NoError(t, err, "the same cancel again is a replay")
		require.Equal(t, res, again)
		_, err = pay.Capture(ctx, provider.CaptureRequest{OperationID: NewOperationID(), ProviderID: auth.ProviderID, Profile: e.cfg.Profile})
		require.Error(t, err, "a released hold cannot be captured")
	})
}

func (s *suite) verifications(t *testing.T) {
	ctx := context.Background()
	t.Run("unknown operation id is NotFound", func(t *testing.T) {
		e := s.env(t)
		_, err := provider.VerificationsOf(e.p).VerificationStatus(ctx, provider.StatusRequest{OperationID: NewOperationID(), Profile: e.cfg.Profile})
		kind(t, err, provider.NotFound)
	})
	t.Run("code read back verifies the card", func(t *testing.T) {
		e := s.env(t)
		e.need(provider.Lookup)
		if e.cfg.VerifyCard == nil || e.cfg.VerifyCode == "" {
			t.Skip("no VerifyCard and VerifyCode")
		}
		v := provider.VerificationsOf(e.p)
		r := provider.VerificationRequest{OperationID: NewOperationID(), OrderID: "conformance", Currency: e.cfg.Currency, Card: *e.cfg.VerifyCard, Profile: e.cfg.Profile}
		first, err := v.CreateVerification(ctx, r)
		require.NoError(t, err)
		e.clean(first, nil)
		require.Equal(t, provider.StatusCodeSent, first.Status)
		second, err := v.CreateVerification(ctx, r)
		require.NoError(t, err, "the same operation id again is a replay")
		require.Equal(t, first, second)
		e.moves(r.OperationID, 1) // the blocked sum, once

		res, err := v.Verify(ctx, provider.VerifyRequest{OperationID: NewOperationID(), ProviderID: first.ProviderID, Code: e.cfg.VerifyCode, Profile: e.cfg.Profile})
		require.NoError(t, err)
		e.clean(res, nil)
		require.NotContains(t, string(mustJSON(t, res)), e.cfg.VerifyCode, "a result never echoes the code")
		require.Equal(t, provider.StatusSucceeded, res.Status)
		got, err := v.VerificationStatus(ctx, provider.StatusRequest{OperationID: r.OperationID, Profile: e.cfg.Profile})
		require.NoError(t, err)
		require.Equal(t, provider.StatusSucceeded, got.Status)
	})
}

func (s *suite) payouts(t *testing.T) {
	ctx := context.Background()
	t.Run("unknown operation id is NotFound", func(t *testing.T) {
		e := s.env(t)
		_, err := provider.PayoutsOf(e.p).PayoutStatus(ctx, provider.StatusRequest{OperationID: NewOperationID(), Profile: e.cfg.Profile})
		kind(t, err, provider.NotFound)
	})
	t.Run("payout succeeds once however often it is sent", func(t *testing.T) {
		e := s.env(t)
		e.need(provider.Debit)
		if e.cfg.Succeeds == nil {
			t.Skip("no Succeeds instrument")
		}
		po := provider.PayoutsOf(e.p)
		r := provider.PayoutRequest{OperationID: NewOperationID(), OrderID: "conformance", AmountMinor: e.cfg.AmountMinor,
			Currency: e.cfg.Currency, Instrument: *e.cfg.Succeeds, Profile: e.cfg.Profile}
		first, err := po.CreatePayout(ctx, r)
		require.NoError(t, err)
		e.clean(first, nil)
		require.Equal(t, provider.StatusSucceeded, first.Status)
		second, err := po.CreatePayout(ctx, r)
		require.NoError(t, err, "the same operation id again is a replay")
		require.Equal(t, first, second)
		got, err := po.PayoutStatus(ctx, provider.StatusRequest{OperationID: r.OperationID, Profile: e.cfg.Profile})
		require.NoError(t, err)
		require.Equal(t, first, got)
		e.moves(r.OperationID, 1)
	})
	t.Run("a decline is a result", func(t *testing.T) {
		e := s.env(t)
		e.need(provider.Debit)
		if e.cfg.Declines == nil {
			t.Skip("no Declines instrument")
		}
		r := provider.PayoutRequest{OperationID: NewOperationID(), AmountMinor: e.cfg.AmountMinor,
			Currency: e.cfg.Currency, Instrument: *e.cfg.Declines, Profile: e.cfg.Profile}
		res, err := provider.PayoutsOf(e.p).CreatePayout(ctx, r)
		require.NoError(t, err)
		e.clean(res, nil)
		require.Equal(t, provider.StatusDeclined, res.Status)
		require.NotEmpty(t, res.DeclineCode)
		e.moves(r.OperationID, 0)
	})
}

func (s *suite) bins(t *testing.T) {
	ctx := context.Background()
	e := s.env(t)
	b := provider.BINSourceOf(e.p)
	t.Run("known BIN", func(t *testing.T) {
		if e.cfg.KnownBIN == "" {
			t.Skip("no KnownBIN")
		}
		info, err := b.BIN(ctx, e.cfg.KnownBIN)
		require.NoError(t, err)
		require.Equal(t, e.cfg.KnownBIN, info.BIN)
		require.NotEmpty(t, info.Scheme)
		require.NotEmpty(t, info.CountryCode)
	})
	t.Run("unknown BIN is NotFound", func(t *testing.T) {
		if e.cfg.UnknownBIN == "" {
			t.Skip("no UnknownBIN")
		}
		_, err := b.BIN(ctx, e.cfg.UnknownBIN)
		kind(t, err, provider.NotFound)
	})
	t.Run("a card number is refused, not looked up", func(t *testing.T) {
		for _, n := range append(e.secrets(), "4242424242424242", "42424", "abcdef") {
			_, err := b.BIN(ctx, n)
			kind(t, err, provider.Invalid)
			require.NotContains(t, err.Error(), n)
		}
	})
}

func (s *suite) hosted(t *testing.T) {
	ctx := context.Background()
	e := s.env(t)
	e.need(provider.HostedPage, provider.Charge)
	r := provider.HostedSessionRequest{OperationID: NewOperationID(), AmountMinor: e.cfg.AmountMinor, Currency: e.cfg.Currency,
		OrderID: "conformance", Locale: "en", ReturnURL: "https://merchant.example/return", Profile: e.cfg.Profile}
	h := provider.HostedPagesOf(e.p)
	first, err := h.HostedSession(ctx, r)
	require.NoError(t, err)
	require.NotEmpty(t, first.ProviderID)
	require.NotEmpty(t, first.URL)
	second, err := h.HostedSession(ctx, r)
	require.NoError(t, err, "the same operation id again is a replay")
	require.Equal(t, first, second)
	if _, ok := e.p.(provider.Payments); ok {
		res, err := provider.PaymentsOf(e.p).Status(ctx, provider.StatusRequest{OperationID: r.OperationID, ProviderID: first.ProviderID, Profile: e.cfg.Profile})
		require.NoError(t, err, "Status finds a hosted session by its operation id and its provider id")
		require.Equal(t, provider.StatusPending, res.Status, "nothing is paid until the payer pays")
	}
	e.moves(r.OperationID, 0)
}
