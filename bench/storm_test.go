package main

import (
	"context"
	"testing"
	"time"
)

// TestStorms runs the duplicate storm, the replay storm, the crash chaos,
// the subscription chaos and the failover checks (two sandbox acquirers;
// Stripe beside the sandbox) at a small size on both databases: the same
// code as the commands, against real processes (the failover checks with a
// 3 s circuit cooldown, so that they do not wait 30).
func TestStorms(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills real Paygate processes")
	}
	if _, err := paygateBinary(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		check string
		cfg   checkConfig
	}{
		{"duplicate-storm", checkConfig{n: 100}},
		{"replay-storm", checkConfig{n: 100}},
		{"crash-chaos", checkConfig{n: 60, kills: 3}},
		{"subscription-chaos", checkConfig{n: 8, kills: 3}},
		{"failover", checkConfig{n: 120, cooldown: 3 * time.Second}},
		{"failover-stripe", checkConfig{n: 60, cooldown: 3 * time.Second}},
	} {
		t.Run(tc.check, func(t *testing.T) {
			databases(t, func(t *testing.T, db string) {
				cfg := tc.cfg
				cfg.db = db
				runSmall(t, tc.check, cfg)
			})
		})
	}
}
