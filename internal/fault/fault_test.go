package fault

import (
	"errors"
	"fmt"
	"testing"
)

func TestConflict(t *testing.T) {
	a, b := Conflict("payment", InvalidPaymentState), Conflict("payout", InvalidPayoutState)
	if got := a.Error(); got != "payment changed concurrently" {
		t.Errorf("message %q: a resource's conflict keeps its own", got)
	}
	for _, err := range []error{a, b, fmt.Errorf("save: %w", b)} {
		if !errors.Is(err, ErrConflict) {
			t.Errorf("%v is not an ErrConflict", err)
		}
	}
	if errors.Is(a, b) || errors.Is(b, a) {
		t.Error("two resources' conflicts are the same error")
	}
	if _, ok := As(a); ok {
		t.Error("a conflict is a *Error: it would be an answer of its own")
	}
	if f, ok := ConflictAnswer(fmt.Errorf("save: %w", b)); !ok || f.Code != InvalidPayoutState || !f.Retryable {
		t.Errorf("the answer to a payout's conflict: %+v, %v", f, ok)
	}
	if _, ok := ConflictAnswer(errors.New("other")); ok {
		t.Error("an error that is no conflict has a conflict's answer")
	}
}

func TestMissing(t *testing.T) {
	noRow, other := errors.New("no such row"), errors.New("connection refused")
	for _, tc := range []struct {
		name     string
		err      error
		notFound error
		want     Code // "" for err itself
	}{
		{"no error", nil, noRow, ""},
		{"no error, no sentinel", nil, nil, ""},
		{"the store's no such row", noRow, noRow, NotFound},
		{"wrapped", fmt.Errorf("find: %w", noRow), noRow, NotFound},
		{"another error", other, noRow, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Missing(tc.err, tc.notFound, "no payment with this id")
			if tc.want == "" {
				if got != tc.err {
					t.Errorf("Missing = %v, want %v itself", got, tc.err)
				}
				return
			}
			if f, ok := As(got); !ok || f.Code != tc.want || f.Message != "no payment with this id" {
				t.Errorf("Missing = %v, want %s with the message", got, tc.want)
			}
		})
	}
}
