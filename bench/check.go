package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// A check is one reliability scenario: it runs against real processes and
// says pass or fail with the figures that prove it.
type check func(ctx context.Context, c checkConfig) (checkResult, error)

// checkConfig sizes a check. The commands use the full sizes from the issue;
// the tests under bench/ run the same code with small ones.
type checkConfig struct {
	db       string        // sqlite or postgres
	n        int           // requests or payments; 0: the check's full size
	kills    int           // crash chaos: SIGKILLs at least; 0: its default
	duration time.Duration // fuzzing: time per target; 0: its default
	cooldown time.Duration // failover: serve --circuit-cooldown; 0: serve's default
	dir      string        // a scratch folder the check may use
	log      io.Writer     // progress lines; never nil
}

// checkResult is what a check prints.
type checkResult struct {
	name    string
	pass    bool
	figures []figure
	failure string // why it failed, when it did
}

type figure struct{ name, value string }

func (r *checkResult) add(name, format string, args ...any) {
	r.figures = append(r.figures, figure{name, fmt.Sprintf(format, args...)})
}

// fail records a failed expectation; the check goes on to report the rest.
func (r *checkResult) fail(format string, args ...any) {
	r.pass = false
	msg := fmt.Sprintf(format, args...)
	if r.failure == "" {
		r.failure = msg
	} else {
		r.failure += "; " + msg
	}
}

func (r checkResult) print(w io.Writer) {
	verdict := "PASS"
	if !r.pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s %s\n", verdict, r.name)
	width := 0
	for _, f := range r.figures {
		width = max(width, len(f.name))
	}
	for _, f := range r.figures {
		fmt.Fprintf(w, "  %-*s  %s\n", width, f.name, f.value)
	}
	if r.failure != "" {
		fmt.Fprintf(w, "  failure: %s\n", r.failure)
	}
}

// checks are the reliability scenarios by name.
var checks = map[string]check{
	"duplicate-storm":    duplicateStorm,
	"replay-storm":       replayStorm,
	"crash-chaos":        crashChaos,
	"subscription-chaos": subscriptionChaos,
	"failover":           failover,
	"failover-stripe":    failoverStripe,
	"fault-soak":         faultSoak,
	"webhook-outage":     webhookOutage,
	"pci-bola":           pciBOLA,
	"export-memory":      exportMemory,
	"cabinet-page":       cabinetPage,
	"fuzz":               fuzz,
}

func checkNames() string {
	names := make([]string, 0, len(checks))
	for n := range checks {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, " | ")
}

var errNotBuilt = errors.New("not built yet")
