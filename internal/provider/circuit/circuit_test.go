package circuit_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider/circuit"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestBreaker: five consecutive unreachable or 5xx calls open the circuit;
// while open, calls fail at once unsent, as a connection that could not be
// made; after the cooldown one probe goes, whose outcome closes the circuit
// or opens it again; a success resets the count (docs/design/decisions.md
// section 17).
func TestBreaker(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	b := circuit.New(clk.Now)
	var changes []circuit.State
	b.OnChange = func(name string, s circuit.State) { require.Equal(t, "acq", name); changes = append(changes, s) }

	status := http.StatusServiceUnavailable
	var sent int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent++
		st := status
		mu.Unlock()
		w.WriteHeader(st)
	}))
	defer srv.Close()
	c := b.Client("acq", &http.Client{Timeout: 5 * time.Second})
	call := func() error {
		res, err := c.Get(srv.URL)
		if err == nil {
			res.Body.Close()
		}
		return err
	}

	for range 4 {
		require.NoError(t, call())
	}
	require.NoError(t, call(), "a 500 is an answer: the caller reads it")
	require.Equal(t, 4+1, sent)
	require.Equal(t, circuit.Open, b.State("acq"))
	require.False(t, b.Available("acq"))
	require.True(t, b.Available("other"), "one circuit per account")

	err := call()
	var op *net.OpError
	require.ErrorAs(t, err, &op, "refused as a connection that could not be made")
	require.Equal(t, "dial", op.Op)
	require.True(t, errors.Is(err, circuit.ErrOpen))
	require.Equal(t, 5, sent, "nothing was sent")

	clk.Add(circuit.Cooldown)
	require.Equal(t, circuit.HalfOpen, b.State("acq"))
	require.True(t, b.Available("acq"))
	require.NoError(t, call(), "the probe goes")
	require.Equal(t, 6, sent)
	require.Equal(t, circuit.Open, b.State("acq"), "a failed probe opens it again")
	require.ErrorIs(t, call(), circuit.ErrOpen)

	clk.Add(circuit.Cooldown)
	mu.Lock()
	status = http.StatusOK
	mu.Unlock()
	require.NoError(t, call())
	require.Equal(t, circuit.Closed, b.State("acq"), "a good probe closes it")
	require.Equal(t, []circuit.State{circuit.Open, circuit.Closed}, changes[len(changes)-2:])

	// Four failures then a success: no circuit opens.
	mu.Lock()
	status = http.StatusBadGateway
	mu.Unlock()
	for range 4 {
		require.NoError(t, call())
	}
	mu.Lock()
	status = http.StatusOK
	mu.Unlock()
	require.NoError(t, call())
	mu.Lock()
	status = http.StatusBadGateway
	mu.Unlock()
	for range 4 {
		require.NoError(t, call())
	}
	require.Equal(t, circuit.Closed, b.State("acq"))
}

// TestUnreachable: a refused connection counts; a 4xx does not.
func TestUnreachable(t *testing.T) {
	clk := &clock{t: time.Now()}
	b := circuit.New(clk.Now)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	ln.Close()
	c := b.Client("down", nil)
	for range circuit.Threshold {
		_, err := c.Get(closed)
		require.Error(t, err)
		require.False(t, errors.Is(err, circuit.ErrOpen))
	}
	_, err = c.Get(closed)
	require.ErrorIs(t, err, circuit.ErrOpen)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) }))
	defer srv.Close()
	up := b.Client("up", nil)
	for range 2 * circuit.Threshold {
		res, err := up.Get(srv.URL)
		require.NoError(t, err)
		res.Body.Close()
	}
	require.Equal(t, circuit.Closed, b.State("up"))
}
