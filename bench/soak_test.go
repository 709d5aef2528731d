package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The reliability checks of soak.go, outage.go, scan.go and fuzz.go at a
// small size: the same code as the commands, against real processes.

// sharedBinary builds Paygate before a test's subtests start their clocks
// (TestMain removes it at the end).
func sharedBinary(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs Paygate")
	}
	if _, err := paygateBinary(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestFaultSoak(t *testing.T) {
	sharedBinary(t)
	databases(t, func(t *testing.T, db string) {
		runSmall(t, "fault-soak", checkConfig{db: db, n: 60})
	})
}

// TestWebhookOutage runs its two databases side by side: the check mostly
// waits for River's scheduler, which moves due jobs every 5 s.
func TestWebhookOutage(t *testing.T) {
	sharedBinary(t)
	databases(t, func(t *testing.T, db string) {
		t.Parallel()
		runSmall(t, "webhook-outage", checkConfig{db: db, n: 10})
	})
}

func TestPCIBOLA(t *testing.T) {
	sharedBinary(t)
	databases(t, func(t *testing.T, db string) {
		runSmall(t, "pci-bola", checkConfig{db: db})
	})
}

func TestFuzzTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and fuzzes every target")
	}
	res := runSmall(t, "fuzz", checkConfig{db: "sqlite", duration: 2 * time.Second})
	for _, f := range res.figures {
		if f.name == "targets" && !strings.Contains(f.value, "FuzzLuhn") {
			t.Errorf("the new targets are not found: %s", f.value)
		}
	}
}

// TestCanaryPatterns: the scan finds each canary in every spelling it
// could leak in, and not a CVV's digits inside an id or a time.
func TestCanaryPatterns(t *testing.T) {
	for _, leak := range []string{
		`{"pan":"` + canaryCard + `"}`,
		`4000 0566 5566 5556`,
		`4000-0566-5566-5556`,
		`masked ***` + canaryCard[3:],
		`cvv=8317&x`,
		`"value":"48213597"`,
		`code 90817263.`,
		`{"value":"52917364"}`,
		`{"number":"4000000000003220"}`,
		`tel: 202-555-7391`,
		`{"extra":"` + canaryWallet + `"}`,
	} {
		if s := scanCanaries([]pciSource{{"logs", leak}}); len(s.hits) == 0 {
			t.Errorf("%q: no hit", leak)
		}
	}
	clean := `{"id":"01a201af-8317-706c-9cf0-690c9be1be1a","at":"2026-11-23T05:17:01.83172Z","masked":"` + canaryMask + `","payout":"400000******3220"}`
	if s := scanCanaries([]pciSource{{"logs", clean}}); len(s.hits) > 0 {
		t.Errorf("false hits: %v", s.hits)
	}
}
