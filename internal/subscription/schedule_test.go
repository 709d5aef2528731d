package subscription

import (
	"testing"
	"time"
)

// TestDueFromTheAnchor is the property of docs/design/decisions.md section
// 11 over every start day 1–31, every interval unit and counts 1–3, for 10
// years: period n is the anchor plus n intervals, the day clamped to the
// month's end, computed from the anchor and never from the previous
// period, so it never drifts (Jan 31 monthly keeps coming back to the 31st
// after February).
func TestDueFromTheAnchor(t *testing.T) {
	for _, month := range []time.Month{time.January, time.March, time.August, time.December} {
		for day := 1; day <= 31; day++ {
			anchor := time.Date(2024, month, day, 9, 30, 15, 0, time.UTC)
			for _, unit := range Units {
				for count := 1; count <= 3; count++ {
					iv := Interval{Unit: unit, Count: count}
					checkSchedule(t, anchor, iv, 10)
				}
			}
		}
	}
	// A leap day anchor, yearly and monthly.
	for _, unit := range []string{Month, Year} {
		for count := 1; count <= 3; count++ {
			checkSchedule(t, time.Date(2024, time.February, 29, 0, 0, 0, 0, time.UTC), Interval{Unit: unit, Count: count}, 10)
		}
	}
}

// checkSchedule checks every period of years years against an independent
// reckoning.
func checkSchedule(t *testing.T, anchor time.Time, iv Interval, years int) {
	t.Helper()
	end := anchor.AddDate(years, 0, 0)
	prev := time.Time{}
	for n := int64(0); ; n++ {
		got := Due(anchor, iv, n)
		if got.After(end) {
			return
		}
		var want time.Time
		switch iv.Unit {
		case Day:
			want = anchor.Add(time.Duration(n*int64(iv.Count)) * 24 * time.Hour)
		case Week:
			want = anchor.Add(time.Duration(n*int64(iv.Count)) * 7 * 24 * time.Hour)
		default:
			months := int(n) * iv.Count
			if iv.Unit == Year {
				months *= 12
			}
			// The first of the target month, then the anchor's day or the
			// month's last, whichever is first.
			first := time.Date(anchor.Year(), anchor.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, months, 0)
			last := first.AddDate(0, 1, -1).Day()
			want = time.Date(first.Year(), first.Month(), min(anchor.Day(), last),
				anchor.Hour(), anchor.Minute(), anchor.Second(), 0, time.UTC)
			if got.Day() != anchor.Day() && got.Day() != last {
				t.Fatalf("%v %+v period %d: day %d drifted from the anchor's %d", anchor, iv, n, got.Day(), anchor.Day())
			}
		}
		if !got.Equal(want) {
			t.Fatalf("%v %+v period %d: got %v, want %v", anchor, iv, n, got, want)
		}
		if !got.After(prev) {
			t.Fatalf("%v %+v period %d: %v is not after period %d's %v", anchor, iv, n, got, n-1, prev)
		}
		if got.Location() != time.UTC {
			t.Fatalf("period %d is not UTC", n)
		}
		prev = got
	}
}

// TestDueExamples are the examples of docs/subscriptions.md.
func TestDueExamples(t *testing.T) {
	d := func(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 12, 0, 0, 0, time.UTC) }
	cases := []struct {
		anchor time.Time
		iv     Interval
		n      int64
		want   time.Time
	}{
		{d(2025, time.January, 31), Interval{Unit: Month, Count: 1}, 1, d(2025, time.February, 28)},
		{d(2024, time.January, 31), Interval{Unit: Month, Count: 1}, 1, d(2024, time.February, 29)},
		{d(2025, time.January, 31), Interval{Unit: Month, Count: 1}, 2, d(2025, time.March, 31)},
		{d(2025, time.January, 31), Interval{Unit: Month, Count: 1}, 3, d(2025, time.April, 30)},
		{d(2024, time.February, 29), Interval{Unit: Year, Count: 1}, 1, d(2025, time.February, 28)},
		{d(2024, time.February, 29), Interval{Unit: Year, Count: 1}, 4, d(2028, time.February, 29)},
		{d(2025, time.August, 31), Interval{Unit: Month, Count: 6}, 1, d(2026, time.February, 28)},
		{d(2025, time.March, 30), Interval{Unit: Week, Count: 2}, 1, d(2025, time.April, 13)},
		// UTC: a day is 24 hours even across a daylight saving change.
		{time.Date(2025, time.March, 29, 23, 0, 0, 0, time.UTC), Interval{Unit: Day, Count: 1}, 1,
			time.Date(2025, time.March, 30, 23, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		if got := Due(c.anchor, c.iv, c.n); !got.Equal(c.want) {
			t.Errorf("Due(%v, %+v, %d) = %v, want %v", c.anchor, c.iv, c.n, got, c.want)
		}
	}
}

// TestFirstAfter: resuming picks the first period due after now, never a
// past one, never skipping one still in the future.
func TestFirstAfter(t *testing.T) {
	anchor := time.Date(2025, time.January, 31, 8, 0, 0, 0, time.UTC)
	for _, unit := range Units {
		for count := 1; count <= 3; count++ {
			iv := Interval{Unit: unit, Count: count}
			for _, from := range []int64{0, 3} {
				for days := 0; days < 3*365; days += 17 {
					now := anchor.AddDate(0, 0, days).Add(time.Duration(days) * time.Minute)
					n := FirstAfter(anchor, iv, from, now)
					if n < from {
						t.Fatalf("%+v from %d at %v: %d is before from", iv, from, now, n)
					}
					if !Due(anchor, iv, n).After(now) {
						t.Fatalf("%+v from %d at %v: period %d (%v) is not in the future", iv, from, now, n, Due(anchor, iv, n))
					}
					if n > from && Due(anchor, iv, n-1).After(now) {
						t.Fatalf("%+v from %d at %v: skipped period %d, still in the future", iv, from, now, n-1)
					}
				}
			}
		}
	}
}

// TestLifeCycle is the subscription's transition table and the actions'
// rules (docs/subscriptions.md, "Statuses"), table-driven.
func TestLifeCycle(t *testing.T) {
	moves := []struct {
		from, to Status
		ok       bool
	}{
		{Incomplete, Active, true}, {Incomplete, Canceled, true}, {Incomplete, PastDue, false},
		{Incomplete, Paused, false}, {Active, PastDue, true}, {Active, Paused, true}, {Active, Canceled, true},
		{Active, Completed, true}, {Active, Incomplete, false}, {PastDue, Active, true}, {PastDue, Paused, true},
		{PastDue, Canceled, true}, {Paused, Active, true}, {Paused, PastDue, false}, {Paused, Canceled, true},
		{Canceled, Active, false}, {Completed, Active, false}, {Canceled, Completed, false},
	}
	for _, m := range moves {
		if got := CanMove(m.from, m.to); got != m.ok {
			t.Errorf("CanMove(%s, %s) = %v, want %v", m.from, m.to, got, m.ok)
		}
	}
	acts := []struct {
		a    Action
		from Status
		to   Status
		ok   bool
	}{
		{Pause, Active, Paused, true}, {Pause, PastDue, Paused, true}, {Pause, Paused, "", false},
		{Pause, Incomplete, "", false}, {Pause, Canceled, "", false}, {Pause, Completed, "", false},
		{Resume, Paused, Active, true}, {Resume, Active, "", false}, {Resume, PastDue, "", false},
		{Resume, Canceled, "", false}, {Cancel, Incomplete, Canceled, true}, {Cancel, Active, Canceled, true},
		{Cancel, PastDue, Canceled, true}, {Cancel, Paused, Canceled, true}, {Cancel, Canceled, "", false},
		{Cancel, Completed, "", false},
	}
	for _, c := range acts {
		to, ok := c.a.Allows(c.from)
		if ok != c.ok || to != c.to {
			t.Errorf("%s in %s = (%s, %v), want (%s, %v)", c.a, c.from, to, ok, c.to, c.ok)
		}
		if ok && !CanMove(c.from, to) {
			t.Errorf("%s in %s leads to %s, which the life cycle does not have", c.a, c.from, to)
		}
	}
	for _, s := range Statuses {
		if Final(s) != (len(transitions[s]) == 0) {
			t.Errorf("%s: final %v but %d moves", s, Final(s), len(transitions[s]))
		}
	}
}
