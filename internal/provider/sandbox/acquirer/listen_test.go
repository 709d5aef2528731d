package acquirer

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
)

// A withheld answer is bounded: after MaxHang it is sent after all, to a
// client that waited long enough.
func TestLateAnswerIsBounded(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxHang = 100 * time.Millisecond })
	start := time.Now()
	res := e.pay(payReq("4000000000000341"))
	require.Equal(t, provider.StatusSucceeded, res.Status)
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
}

// Close does not wait MaxHang for withheld answers: it sends them at once.
func TestCloseReleasesWithheldAnswers(t *testing.T) {
	run, err := Start(Config{MaxHang: time.Minute})
	require.NoError(t, err)
	a := sandbox.NewAdapter(run.URL, run.APIKey, &http.Client{Timeout: time.Minute})
	r := payReq("4000000000000341")
	done := make(chan error, 1)
	go func() {
		_, err := a.Pay(context.Background(), r)
		done <- err
	}()
	// The charge is made before the answer is withheld.
	require.Eventually(t, func() bool { return run.Server.Count(EntryCharge, r.OperationID) == 1 },
		5*time.Second, 5*time.Millisecond)
	start := time.Now()
	require.NoError(t, run.Close())
	require.NoError(t, <-done)
	require.Less(t, time.Since(start), 5*time.Second)
	require.NoError(t, run.Close(), "closing twice is harmless")
}

func TestListenAndServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ListenAndServe(ctx, "127.0.0.1:0", Config{}) }()
	cancel()
	require.NoError(t, <-done)

	require.Error(t, ListenAndServe(context.Background(), "127.0.0.1:-1", Config{}))
}

func TestListenReportsAReachableURL(t *testing.T) {
	run, err := Listen("0.0.0.0:0", Config{APIKey: "k"})
	require.NoError(t, err)
	defer run.Close()
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, run.URL)
	require.Equal(t, "k", run.APIKey)
	_, err = sandbox.NewAdapter(run.URL, run.APIKey, nil).BIN(context.Background(), "424242")
	require.NoError(t, err)
}
