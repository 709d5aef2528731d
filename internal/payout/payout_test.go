package payout

import "testing"

// TestLifeCycle is the whole transition table (docs/design/decisions.md
// section 15): every pair of statuses, allowed or not.
func TestLifeCycle(t *testing.T) {
	allowed := map[[2]Status]bool{
		{Processing, RequiresAction}: true, {Processing, Succeeded}: true, {Processing, Declined}: true,
		{Processing, Failed}: true, {Processing, ManualReview}: true,
		{RequiresAction, Processing}: true, {RequiresAction, Succeeded}: true, {RequiresAction, Declined}: true,
		{RequiresAction, Failed}: true, {RequiresAction, ManualReview}: true,
		{ManualReview, RequiresAction}: true, {ManualReview, Succeeded}: true, {ManualReview, Declined}: true,
		{ManualReview, Failed}: true,
	}
	for _, from := range Statuses {
		for _, to := range Statuses {
			if got, want := CanMove(from, to), allowed[[2]Status{from, to}]; got != want {
				t.Errorf("CanMove(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
		if want := from == Succeeded || from == Declined || from == Failed; from.Final() != want {
			t.Errorf("%s.Final() = %v", from, from.Final())
		}
	}
}
