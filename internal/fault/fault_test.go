package fault

import (
	"errors"
	"fmt"
	"testing"
)

func TestConflict(t *testing.T) {
	a, b := Conflict("payment changed concurrently"), Conflict("payout changed concurrently")
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
}
