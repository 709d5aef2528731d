package main

import (
	"context"
	"os"
	"sync"
	"testing"
)

// TestStorms runs the duplicate storm, the replay storm and the crash
// chaos at a small size on both databases: the same code as the commands,
// against real processes.
func TestStorms(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills real Paygate processes")
	}
	keepBinary(t)
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

// keepBinary builds cmd/paygate into a folder that outlives the subtests.
// buildPaygate builds once per process into the first caller's folder;
// when that was an earlier test's TempDir, the binary is gone by now and is
// built again, here.
func keepBinary(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	path, err := buildPaygate(context.Background(), dir)
	if err == nil {
		if _, statErr := os.Stat(path); statErr != nil {
			built.Once, built.path, built.err = sync.Once{}, "", nil
			_, err = buildPaygate(context.Background(), dir)
		}
	}
	if err != nil {
		t.Fatalf("build cmd/paygate: %v", err)
	}
}
