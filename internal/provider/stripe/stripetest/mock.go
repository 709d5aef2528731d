// Package stripetest runs Stripe without the internet for Paygate's tests
// (docs/providers/stripe.md, "Testing"): stripe-mock, Stripe's own mock
// server, which refuses every request its published OpenAPI document does
// not allow, and Fake, a stateful stand-in whose answers tests validate
// against that same document.
package stripetest

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

var listening = regexp.MustCompile(`Listening for HTTP at address: (\S+)`)

// StartMock starts stripe-mock (the Go tool pinned in go.mod) on a free
// loopback port for the test and returns its base URL. It stops with the
// test.
func StartMock(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "go", "tool", "stripe-mock", "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	cmd.Dir = root
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start stripe-mock: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	found := make(chan string, 1)
	var lines []string
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines = append(lines, s.Text())
			if m := listening.FindStringSubmatch(s.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			t.Fatalf("stripe-mock stopped before it listened:\n%s", strings.Join(lines, "\n"))
		}
		go func() {
			for range found { // keep draining its output
			}
		}()
		return "http://" + addr
	case <-time.After(2 * time.Minute):
		t.Fatal("stripe-mock did not start within 2 minutes")
	}
	return ""
}
