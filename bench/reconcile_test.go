package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestReconcileScale runs the mode -reconcile on a small day: the run finds
// exactly the planted breaks, on both databases.
func TestReconcileScale(t *testing.T) {
	databases(t, func(t *testing.T, db string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var log strings.Builder
		run, err := reconcileScale(ctx, db, 20000, &log)
		if err == nil {
			err = run.check()
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		t.Log(run.line())
		run.res.ByKind["amount_mismatch"]--
		if run.check() == nil {
			t.Fatal("a run one break short passed the check")
		}
	})
}
