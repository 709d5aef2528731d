package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
)

// TestSandboxAcquirerFaultFlags: `paygate sandbox-acquirer --fault-503-rate
// 1` answers every call 503 before doing anything (an outage an operator can
// rehearse), which Paygate reads as a call that did nothing; rates out of
// range are usage errors.
func TestSandboxAcquirerFaultFlags(t *testing.T) {
	_, err := cli(t, nil, "sandbox-acquirer", "--fault-503-rate", "1.5")
	require.ErrorAs(t, err, new(usageError))
	_, err = cli(t, nil, "sandbox-acquirer", "--fault-503-rate", "0.6", "--fault-timeout-rate", "0.6")
	require.ErrorAs(t, err, new(usageError))

	ctx, cancel := context.WithCancel(context.Background())
	out := newOutput(`listening on (http://\S+)`)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"sandbox-acquirer", "--addr", "127.0.0.1:0", "--fault-503-rate", "1"},
			getenvFrom(nil), nil, out, &output{})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var url string
	select {
	case url = <-out.found:
	case err := <-done:
		t.Fatalf("sandbox-acquirer ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("sandbox-acquirer did not start")
	}
	key := regexp.MustCompile(`api key (\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, key, out.String())
	a := sandbox.NewAdapter(url, key[1], nil)
	_, err = a.Pay(context.Background(), provider.PayRequest{OperationID: "op_fault", AmountMinor: 100, Currency: "USD",
		Instrument: provider.Instrument{Card: &provider.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2040, CVV: "123"}}})
	require.Equal(t, provider.Transient, provider.KindOf(err))
	require.True(t, provider.IsUnsent(err), "a 503 of the sandbox did nothing: %v", err)
}
