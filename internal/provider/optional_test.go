package provider_test

import (
	"context"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/provider"
)

// coreOnly offers the core interface and nothing else: an acquirer that
// does, say, payouts only would look like this for payments.
type coreOnly struct{}

func (coreOnly) Name() string { return "core_only" }
func (coreOnly) Capabilities(string) (provider.Capabilities, error) {
	return provider.Capabilities{}, nil
}

// binOnly offers the core and a BIN source.
type binOnly struct{ coreOnly }

func (binOnly) BIN(_ context.Context, bin string) (provider.BINInfo, error) {
	return provider.BINInfo{BIN: bin}, nil
}

func TestOptionalInterfacesMissingAreUnsupported(t *testing.T) {
	ctx := context.Background()
	p := coreOnly{}
	card := &provider.Card{Number: "4242424242424242", CVV: "123"}
	calls := map[string]func() error{
		"Pay": func() error {
			_, err := provider.PaymentsOf(p).Pay(ctx, provider.PayRequest{OperationID: "op_1",
				Instrument: provider.Instrument{Card: card}})
			return err
		},
		"Capture": func() error { _, err := provider.PaymentsOf(p).Capture(ctx, provider.CaptureRequest{}); return err },
		"Cancel":  func() error { _, err := provider.PaymentsOf(p).Cancel(ctx, provider.CancelRequest{}); return err },
		"Refund":  func() error { _, err := provider.PaymentsOf(p).Refund(ctx, provider.RefundRequest{}); return err },
		"Confirm": func() error {
			_, err := provider.PaymentsOf(p).Confirm(ctx, provider.ConfirmRequest{Code: "123456"})
			return err
		},
		"Status": func() error { _, err := provider.PaymentsOf(p).Status(ctx, provider.StatusRequest{}); return err },
		"CreateVerification": func() error {
			_, err := provider.VerificationsOf(p).CreateVerification(ctx, provider.VerificationRequest{Card: *card})
			return err
		},
		"Verify": func() error {
			_, err := provider.VerificationsOf(p).Verify(ctx, provider.VerifyRequest{Code: "123456"})
			return err
		},
		"VerificationStatus": func() error {
			_, err := provider.VerificationsOf(p).VerificationStatus(ctx, provider.StatusRequest{})
			return err
		},
		"CreatePayout": func() error {
			_, err := provider.PayoutsOf(p).CreatePayout(ctx, provider.PayoutRequest{Instrument: provider.Instrument{Card: card}})
			return err
		},
		"ConfirmPayout": func() error {
			_, err := provider.PayoutsOf(p).ConfirmPayout(ctx, provider.ConfirmRequest{})
			return err
		},
		"PayoutStatus": func() error {
			_, err := provider.PayoutsOf(p).PayoutStatus(ctx, provider.StatusRequest{})
			return err
		},
		"BIN": func() error { _, err := provider.BINSourceOf(p).BIN(ctx, "424242"); return err },
		"HostedSession": func() error {
			_, err := provider.HostedPagesOf(p).HostedSession(ctx, provider.HostedSessionRequest{})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if got := provider.KindOf(err); got != provider.Unsupported {
				t.Fatalf("kind = %q, want unsupported (error %v)", got, err)
			}
			for _, secret := range []string{"4242424242424242", "123456", "424242"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error %q quotes the request", err)
				}
			}
			if !strings.Contains(err.Error(), "core_only") {
				t.Fatalf("error %q does not name the provider", err)
			}
		})
	}
}

func TestOptionalInterfacesPresentAreTheAdapter(t *testing.T) {
	p := binOnly{}
	if _, ok := provider.BINSourceOf(p).(binOnly); !ok {
		t.Fatal("BINSourceOf did not return the adapter itself")
	}
	info, err := provider.BINSourceOf(p).BIN(context.Background(), "555555")
	if err != nil || info.BIN != "555555" {
		t.Fatalf("BIN = %+v, %v", info, err)
	}
	if _, err := provider.PaymentsOf(p).Pay(context.Background(), provider.PayRequest{}); provider.KindOf(err) != provider.Unsupported {
		t.Fatalf("Pay on a BIN-only provider: %v, want unsupported", err)
	}
}
