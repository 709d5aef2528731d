package main

import (
	"context"
	"testing"
)

// TestStorms runs the duplicate storm, the replay storm, the crash chaos
// and the subscription chaos at a small size on both databases: the same code as the commands,
// against real processes.
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
