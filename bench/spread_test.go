package main

import (
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// TestSpread: a cluster run sends its targets round-robin to the API
// processes, each keeping its path and query (the signature covers them,
// not the host).
func TestSpread(t *testing.T) {
	inner := func(tg *vegeta.Target) error {
		tg.Method, tg.URL = "POST", "http://127.0.0.1:1/api/v1/payments/direct?x=1"
		return nil
	}
	tr := spread(inner, "http://127.0.0.1:1", []string{"http://127.0.0.1:1", "http://127.0.0.1:2"})
	seen := map[string]int{}
	for range 10 {
		var tg vegeta.Target
		if err := tr(&tg); err != nil {
			t.Fatal(err)
		}
		seen[tg.URL]++
	}
	if seen["http://127.0.0.1:1/api/v1/payments/direct?x=1"] != 5 || seen["http://127.0.0.1:2/api/v1/payments/direct?x=1"] != 5 {
		t.Fatalf("targets: %v", seen)
	}
	var one vegeta.Target
	if err := spread(inner, "http://127.0.0.1:1", []string{"http://127.0.0.1:1"})(&one); err != nil || one.URL != "http://127.0.0.1:1/api/v1/payments/direct?x=1" {
		t.Fatalf("one process: %v %q", err, one.URL)
	}
}
