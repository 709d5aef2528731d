package payment

import "testing"

// TestLifeCycle checks the transition table against docs/design/decisions.md
// section 4, edge by edge; anything not listed is refused.
func TestLifeCycle(t *testing.T) {
	allowed := map[[2]Status]bool{}
	for _, e := range [][2]Status{
		{Created, AwaitingPaymentData}, {Created, Processing}, {Created, Canceled}, {Created, Expired},
		{AwaitingPaymentData, Processing}, {AwaitingPaymentData, Canceled}, {AwaitingPaymentData, Expired},
		// A provider_redirect session: the payer goes to the provider at once.
		{Created, RequiresAction}, {AwaitingPaymentData, RequiresAction},
		{Processing, RequiresAction}, {Processing, Authorized}, {Processing, Succeeded}, {Processing, Declined},
		{Processing, Failed}, {Processing, ManualReview}, {Processing, AwaitingPaymentData}, {Processing, Expired},
		{RequiresAction, AwaitingPaymentData},
		{RequiresAction, Processing}, {RequiresAction, Authorized}, {RequiresAction, Succeeded},
		{RequiresAction, Declined}, {RequiresAction, Failed}, {RequiresAction, ManualReview}, {RequiresAction, Expired},
		{ManualReview, Processing}, {ManualReview, RequiresAction}, {ManualReview, Authorized},
		{ManualReview, Succeeded}, {ManualReview, Declined}, {ManualReview, Failed}, {ManualReview, Expired},
		{ManualReview, Canceled},
		{Authorized, Succeeded}, {Authorized, Canceled}, {Authorized, Expired}, {Authorized, ManualReview},
		{Succeeded, PartiallyRefunded}, {Succeeded, Refunded},
		{PartiallyRefunded, PartiallyRefunded}, {PartiallyRefunded, Refunded},
	} {
		allowed[e] = true
	}
	for _, from := range Statuses {
		for _, to := range Statuses {
			t.Run(string(from)+"→"+string(to), func(t *testing.T) {
				if got, want := CanMove(from, to), allowed[[2]Status{from, to}]; got != want {
					t.Fatalf("CanMove = %v, want %v", got, want)
				}
			})
		}
	}
}

func TestFinal(t *testing.T) {
	final := map[Status]bool{Succeeded: true, Declined: true, Failed: true, Canceled: true, Expired: true,
		PartiallyRefunded: true, Refunded: true}
	for _, s := range Statuses {
		if s.Final() != final[s] {
			t.Errorf("%s: Final() = %v", s, s.Final())
		}
	}
	for s := range transitions {
		if s.Final() && s != Succeeded && s != PartiallyRefunded {
			t.Errorf("final status %s has exits", s)
		}
	}
}
