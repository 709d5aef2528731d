package operation

import (
	"context"
	"testing"
)

// TestSteps: a step is held until released (once, however often release is
// called); a job that cannot get one gives up when its context ends.
func TestSteps(t *testing.T) {
	e := &Engine[Reader, Tx]{Steps: make(chan struct{}, 1)}
	ctx := context.Background()
	release, err := e.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waiting, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Step(waiting); err == nil {
		t.Fatal("a second step was granted while the only one is held")
	}
	release()
	release() // a second release must not free a step someone else holds
	other, err := e.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Step(waiting); err == nil {
		t.Fatal("the double release freed a step twice")
	}
	other()

	unbounded := &Engine[Reader, Tx]{}
	for range 3 {
		if _, err := unbounded.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
