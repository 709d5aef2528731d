package money

import (
	"math"
	"testing"
)

func TestKnownAndMinorUnits(t *testing.T) {
	tests := []struct {
		code   string
		known  bool
		digits int
	}{
		{"USD", true, 2},
		{"EUR", true, 2},
		{"JPY", true, 0},
		{"KRW", true, 0},
		{"KWD", true, 3},
		{"BHD", true, 3},
		{"IQD", true, 3},
		{"CLF", true, 4},
		{"UYW", true, 4},
		{"usd", false, 0},
		{"Usd", false, 0},
		{"", false, 0},
		{"US", false, 0},
		{"USDX", false, 0},
		{"ABC", false, 0},
		{"XXX", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			if got := Known(tt.code); got != tt.known {
				t.Errorf("Known(%q) = %v, want %v", tt.code, got, tt.known)
			}
			digits, ok := MinorUnits(tt.code)
			if ok != tt.known || digits != tt.digits {
				t.Errorf("MinorUnits(%q) = %d, %v; want %d, %v", tt.code, digits, ok, tt.digits, tt.known)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		amount int64
		code   string
		want   string
	}{
		{1234, "USD", "USD 12.34"},
		{5, "USD", "USD 0.05"},
		{0, "USD", "USD 0.00"},
		{100, "EUR", "EUR 1.00"},
		{123456789, "USD", "USD 1234567.89"},
		{1234, "JPY", "JPY 1234"},
		{0, "JPY", "JPY 0"},
		{1234, "KWD", "KWD 1.234"},
		{1, "KWD", "KWD 0.001"},
		{12345, "CLF", "CLF 1.2345"},
		{-1234, "USD", "USD -12.34"},
		{-5, "KWD", "KWD -0.005"},
		{math.MaxInt64, "USD", "USD 92233720368547758.07"},
		{math.MinInt64, "USD", "USD -92233720368547758.08"},
		{math.MinInt64, "JPY", "JPY -9223372036854775808"},
		{1234, "ABC", "ABC 1234"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Format(tt.amount, tt.code); got != tt.want {
				t.Errorf("Format(%d, %q) = %q, want %q", tt.amount, tt.code, got, tt.want)
			}
		})
	}
}
