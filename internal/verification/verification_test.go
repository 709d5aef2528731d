package verification

import "testing"

// TestLifeCycle is the status table of docs/verifications.md.
func TestLifeCycle(t *testing.T) {
	all := []Status{Pending, CodeSent, Verified, Failed, ManualReview}
	allowed := map[[2]Status]bool{
		{Pending, CodeSent}: true, {Pending, Verified}: true, {Pending, Failed}: true, {Pending, ManualReview}: true,
		{CodeSent, Verified}: true, {CodeSent, Failed}: true, {CodeSent, ManualReview}: true,
		{ManualReview, CodeSent}: true, {ManualReview, Verified}: true, {ManualReview, Failed}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := CanMove(from, to); got != allowed[[2]Status{from, to}] {
				t.Errorf("CanMove(%s, %s) = %v", from, to, got)
			}
		}
	}
	for _, s := range all {
		if s.Final() != (s == Verified || s == Failed) {
			t.Errorf("%s.Final() = %v", s, s.Final())
		}
	}
}

func TestClientDescriptionIsNeutral(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range []Verification{{Status: Pending}, {Status: CodeSent}, {Status: Verified}, {Status: ManualReview},
		{Status: Failed, DeclineCode: "card_declined"}, {Status: Failed, DeclineCode: DeclineExpired}} {
		d := ClientDescription(&v)
		if d == "" || seen[d] && v.Status != Failed {
			t.Errorf("%s: description %q", v.Status, d)
		}
		seen[d] = true
	}
}
