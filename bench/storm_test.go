package main

import (
	"context"
	"testing"
)

// TestStorms runs the duplicate storm, the replay storm and the crash
// chaos at a small size on both databases: the same code as the commands,
// against real processes.
func TestStorms(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills real Paygate processes")
	}
	// One binary for every subtest: buildPaygate keeps its first caller's
	// folder, and a subtest's TempDir is gone when the next one starts.
	if _, err := paygateBinary(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(removeBinary)
	for _, tc := range []struct {
		check string
		cfg   checkConfig
	}{
		{"duplicate-storm", checkConfig{n: 100}},
		{"replay-storm", checkConfig{n: 100}},
		{"crash-chaos", checkConfig{n: 60, kills: 3}},
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
