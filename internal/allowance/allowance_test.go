package allowance

import (
	"testing"
	"time"

	"github.com/paygate/paygate/internal/fault"
)

func ptr(v int64) *int64 { return &v }

// TestFigures: remaining is the smaller of the per-transaction limit and
// what is left of the day, never below zero, nil when both are unset; the
// day resets at the next UTC midnight.
func TestFigures(t *testing.T) {
	at := time.Date(2031, 5, 6, 23, 59, 59, 0, time.FixedZone("UTC+3", 3*3600)) // 20:59:59 UTC
	for _, tc := range []struct {
		name       string
		per, daily *int64
		u          Usage
		want       *int64
	}{
		{"unset", nil, nil, Usage{5, 5}, nil},
		{"daily left", nil, ptr(100), Usage{30, 20}, ptr(50)},
		{"daily passed", nil, ptr(100), Usage{90, 20}, ptr(0)},
		{"per transaction smaller", ptr(10), ptr(100), Usage{30, 20}, ptr(10)},
		{"per transaction alone", ptr(10), nil, Usage{}, ptr(10)},
	} {
		f := FiguresOf(Setting{PerTransactionMinor: tc.per, DailyMinor: tc.daily}, tc.u, at)
		if (f.RemainingMinor == nil) != (tc.want == nil) || (tc.want != nil && *f.RemainingMinor != *tc.want) {
			t.Errorf("%s: remaining %v, want %v", tc.name, f.RemainingMinor, tc.want)
		}
		if want := time.Date(2031, 5, 7, 0, 0, 0, 0, time.UTC); !f.ResetsAt.Equal(want) {
			t.Errorf("%s: resets at %s", tc.name, f.ResetsAt)
		}
	}
	if Day(at) != "2031-05-06" {
		t.Errorf("day %s", Day(at))
	}
}

// TestExceeded: the 422 fault carries the figures of
// docs/design/decisions.md section 12 for the setting passed.
func TestExceeded(t *testing.T) {
	at := time.Date(2031, 5, 6, 12, 0, 0, 0, time.UTC)
	s := Setting{Allowance: Payout, Currency: "UAH", PerTransactionMinor: ptr(70), DailyMinor: ptr(100)}
	f := Exceeded(s, SettingDaily, Usage{UsedMinor: 40, ReservedMinor: 50}, at)
	if f.Code != fault.LimitExceeded {
		t.Fatalf("code %s", f.Code)
	}
	want := map[string]any{"allowance": "payout", "currency": "UAH", "setting": "daily", "limit_minor": int64(100),
		"used_minor": int64(40), "reserved_minor": int64(50), "remaining_minor": int64(10), "resets_at": "2031-05-07T00:00:00Z"}
	for k, v := range want {
		if f.Details[k] != v {
			t.Errorf("%s: %v, want %v", k, f.Details[k], v)
		}
	}
	if g := Exceeded(s, SettingPerTransaction, Usage{}, at); g.Details["limit_minor"] != int64(70) {
		t.Errorf("per-transaction limit_minor %v", g.Details["limit_minor"])
	}
}
