package subscription

import (
	"time"

	"github.com/paygate/paygate/internal/recurring"
)

// Interval units (schema SubscriptionTerms, interval_unit).
const (
	Day   = "day"
	Week  = "week"
	Month = "month"
	Year  = "year"
)

// Units lists the interval units.
var Units = []string{Day, Week, Month, Year}

// Interval is a subscription's period length.
type Interval = recurring.Interval

// Due is when period n (from 0) is due: anchor plus n intervals, always
// computed from the anchor, never from the previous period
// (docs/design/decisions.md section 11). Months and years keep the
// anchor's day, clamped to the month's last day: monthly from Jan 31 is
// Feb 28 (29), Mar 31, Apr 30; yearly from Feb 29 is Feb 28 in common
// years. The time of day is the anchor's; everything is UTC, so daylight
// saving never moves a charge.
func Due(anchor time.Time, iv Interval, n int64) time.Time {
	a := anchor.UTC()
	steps := n * int64(iv.Count)
	switch iv.Unit {
	case Day: // calendar days of UTC are exactly 24 h; a Duration would overflow after 292 years
		return a.AddDate(0, 0, int(steps))
	case Week:
		return a.AddDate(0, 0, int(steps)*7)
	case Year:
		steps *= 12
	}
	// Months: count whole months from the anchor's, then clamp the day.
	months := int64(a.Year())*12 + int64(a.Month()-1) + steps
	y, m := int(months/12), time.Month(months%12+1)
	d := min(a.Day(), daysIn(y, m))
	return time.Date(y, m, d, a.Hour(), a.Minute(), a.Second(), a.Nanosecond(), time.UTC)
}

// daysIn is the number of days of month m of year y.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// FirstAfter is the first period, from `from` on, due strictly after t:
// where a resumed subscription picks up (docs/design/decisions.md section
// 5: the next interval boundary in the future, paused periods skipped).
func FirstAfter(anchor time.Time, iv Interval, from int64, t time.Time) int64 {
	n := from
	if !Due(anchor, iv, n).After(t) {
		// Jump close by the average length, then step: a schedule of
		// days over years must not take thousands of steps.
		if avg := approx(iv); avg > 0 {
			if k := int64(t.Sub(Due(anchor, iv, n)) / avg); k > 1 {
				n += k - 1
			}
		}
		for !Due(anchor, iv, n).After(t) {
			n++
		}
	}
	// A jump may overshoot by a period: step back while the previous is
	// still after t.
	for n > from && Due(anchor, iv, n-1).After(t) {
		n--
	}
	return n
}

// approx is the interval's shortest length, for FirstAfter's jump.
func approx(iv Interval) time.Duration {
	day := 24 * time.Hour
	switch iv.Unit {
	case Day:
		return time.Duration(iv.Count) * day
	case Week:
		return time.Duration(iv.Count) * 7 * day
	case Month:
		return time.Duration(iv.Count) * 28 * day
	case Year:
		return time.Duration(iv.Count) * 365 * day
	}
	return 0
}

// CardExpiryEnd is the first instant a card that expires in month/year is
// no longer good: it is good through the last day of its expiry month.
func CardExpiryEnd(month, year int) time.Time {
	return time.Date(year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC)
}
