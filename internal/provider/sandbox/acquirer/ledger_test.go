package acquirer

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

func TestLedgerOverHTTP(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r1 := payReq("4242424242424242")
	e.pay(r1)
	_, auth := e.authorize("5555555555554444")
	_, err := e.a.Capture(ctx, provider.CaptureRequest{OperationID: op(), ProviderID: auth.ProviderID, AmountMinor: 100})
	require.NoError(t, err)

	entries, err := e.a.Ledger(ctx)
	require.NoError(t, err)
	require.Equal(t, e.srv.Ledger(), entries)
	require.Equal(t, []string{EntryCharge, EntryHold, EntryCapture, EntryRelease}, kinds(entries))
	for i, en := range entries {
		require.Equal(t, int64(i+1), en.Seq)
		require.Equal(t, e.clock.Now(), en.At)
	}
	require.Equal(t, 1, Count(entries, EntryCharge, r1.OperationID))

	resp, body := e.raw("GET", "/v1/ledger?kind=charge&id="+url.QueryEscape(r1.OperationID), "", "", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var v wire.LedgerView
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	require.Len(t, v.Entries, 1)
	require.Equal(t, r1.OperationID, v.Entries[0].OperationID)
}

func kinds(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Kind)
	}
	return out
}

// A sandbox restarted on its state file remembers its ledger and its
// operations: a restarted Paygate's status inquiry finds what it sent, and
// resending finds the first answer instead of charging again.
func TestStateFileSurvivesRestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sandbox.json")
	clk := newClock()
	cfg := func(c *Config) { c.StateFile, c.Now = file, clk.Now }
	e1 := newEnv(t, cfg)
	charged := payReq("4242424242424242")
	first := e1.pay(charged)
	held := payReq("4242424242424242")
	held.Authorize = true
	e1.pay(held)
	pending := payReq("4000000000003220")
	challenge := e1.pay(pending)
	saved := payReq("4242424242424242")
	saved.SaveCard = true
	token := e1.pay(saved).CardToken
	before := e1.srv.Ledger()
	require.NoError(t, e1.run.Close())

	e2 := newEnv(t, cfg)
	ctx := context.Background()
	require.Equal(t, before, e2.srv.Ledger())
	got, err := e2.a.Status(ctx, provider.StatusRequest{OperationID: charged.OperationID})
	require.NoError(t, err)
	require.Equal(t, first.ProviderID, got.ProviderID)
	again := e2.pay(charged)
	require.Equal(t, first, again)
	require.Equal(t, 1, e2.srv.Count(EntryCharge, charged.OperationID))

	// The 3DS page, the card token and the hold's expiry all carry over.
	u := strings.Replace(challenge.NextAction.URL, e1.run.URL, e2.run.URL, 1)
	e2.submit(u, url.Values{"outcome": {"approve"}})
	require.Equal(t, 1, e2.srv.Count(EntryCharge, pending.OperationID))
	byToken := payReq("")
	byToken.Instrument = provider.Instrument{SavedToken: token}
	require.Equal(t, provider.StatusSucceeded, e2.pay(byToken).Status)
	clk.Advance(8 * 24 * time.Hour)
	require.Equal(t, 1, e2.srv.Count(EntryRelease, held.OperationID))

	info, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

// The state file is a journal: one line per change, rewritten as a single
// snapshot on start. A last line cut short by a kill was never answered,
// and is dropped.
func TestStateFileJournal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sandbox.json")
	s, err := Open(Config{StateFile: file})
	require.NoError(t, err)
	h := httptest.NewServer(s)
	a := sandbox.NewAdapter(h.URL, s.APIKey(), nil)
	var ops []string
	for range 3 {
		r := payReq("4242424242424242")
		_, err := a.Pay(context.Background(), r)
		require.NoError(t, err)
		ops = append(ops, r.OperationID)
	}
	h.Close()
	s.Close()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, 4, strings.Count(string(b), "\n"), "a snapshot and three changes")

	torn := `{"ledger":[{"seq":4,"kind":"charge","operation_id":"op_torn"`
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(torn)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	s, err = Open(Config{StateFile: file})
	require.NoError(t, err)
	defer s.Close()
	require.Len(t, s.Ledger(), 3)
	for _, op := range ops {
		require.Equal(t, 1, s.Count(EntryCharge, op))
	}
	b, err = os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), "\n"), "compacted on start")
	require.NotContains(t, string(b), "op_torn")
}

// One process at a time runs a sandbox on a state file: a second Open is
// refused while the first runs, and succeeds once it is closed
// (docs/sandbox.md, "The state file").
func TestStateFileLocked(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sandbox.json")
	s, err := Open(Config{StateFile: file})
	require.NoError(t, err)
	_, err = Open(Config{StateFile: file})
	require.ErrorContains(t, err, "in use by another process")
	require.Error(t, New(Config{StateFile: file}).broken, "New refuses every request instead")
	s.Close()
	s, err = Open(Config{StateFile: file})
	require.NoError(t, err)
	s.Close()
}

// The state file is compacted in the background while changes go on being
// appended: every change made meanwhile is in the file afterwards, once.
func TestStateFileCompaction(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sandbox.json")
	s, err := Open(Config{StateFile: file})
	require.NoError(t, err)
	s.mu.Lock()
	s.compactMin = 1 // compact whenever the changes weigh as much as the snapshot
	s.mu.Unlock()
	h := httptest.NewServer(s)
	a := sandbox.NewAdapter(h.URL, s.APIKey(), nil)
	var (
		mu  sync.Mutex
		ops []string
		wg  sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for range 40 {
				r := payReq("4242424242424242")
				_, err := a.Pay(context.Background(), r)
				assert.NoError(t, err)
				mu.Lock()
				ops = append(ops, r.OperationID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	h.Close()
	s.Close()
	s.mu.Lock()
	compacted := s.compacted
	s.mu.Unlock()
	require.Positive(t, compacted, "compactions while paying")

	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Less(t, strings.Count(string(b), "\n"), len(ops)+1, "fewer lines than a snapshot and every change")
	r, err := Open(Config{StateFile: file})
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, s.Ledger(), r.Ledger())
	require.Len(t, r.Ledger(), len(ops))
	for _, op := range ops {
		require.Equal(t, 1, r.Count(EntryCharge, op))
	}
}

func TestStateFileUnreadable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sandbox.json")
	require.NoError(t, os.WriteFile(file, []byte("{not json"), 0o600))
	_, err := Open(Config{StateFile: file})
	require.Error(t, err)

	// New cannot fail, so it refuses to work rather than forget charges.
	s := New(Config{StateFile: file})
	req, _ := http.NewRequest("GET", "/v1/ledger", nil)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
}

// No answer, URL, ledger entry or state file ever holds a card number or
// a CVV: masks only.
func TestNoCardDataLeaves(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sandbox.json")
	e := newEnv(t, func(c *Config) { c.StateFile = file })
	ctx := context.Background()
	numbers := []string{"4242424242424242", "4000000000003220", "4000000000000002", "4000000000000259", "5555555555554444"}
	for _, n := range numbers {
		r := payReq(n)
		r.SaveCard = true
		e.a.Pay(ctx, r)
		e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
		e.a.CreateVerification(ctx, verificationReq(n))
		e.a.CreatePayout(ctx, payoutReq(n))
	}
	_, auth := e.authorize("4242424242424242")
	e.a.Capture(ctx, provider.CaptureRequest{OperationID: op(), ProviderID: auth.ProviderID})

	ledger, err := json.Marshal(e.srv.Ledger())
	require.NoError(t, err)
	state, err := os.ReadFile(file)
	require.NoError(t, err)
	for _, n := range numbers {
		for _, x := range e.rec.exchanges() {
			require.NotContains(t, x.url, n)
			require.NotContains(t, x.respBody, n)
		}
		require.NotContains(t, string(ledger), n)
		require.NotContains(t, string(state), n)
	}
	for _, x := range e.rec.exchanges() {
		require.NotContains(t, x.respBody, `"cvv"`)
		require.NotContains(t, x.respBody, `"number"`)
	}
	require.NotContains(t, string(state), `"cvv"`)
	require.Contains(t, string(ledger), "424242******4242")
}

// TestLedgerPages: GET /v1/ledger pages through the entries in seq order
// (after, limit, has_more), each once, whatever the time filter skips;
// the adapter's Movements reads them page by page, each movement once,
// with the sandbox's payment id as its PaymentRef.
func TestLedgerPages(t *testing.T) {
	e := newEnv(t)
	day := e.clock.Now().Truncate(24 * time.Hour)
	var planted []Entry
	for i := range 2500 {
		at := day.Add(time.Duration(i) * time.Second)
		if i%10 == 9 {
			at = day.Add(-48 * time.Hour) // outside the window: skipped, pages still whole
		}
		planted = append(planted, Entry{Kind: EntryCharge, OperationID: "op-" + strconv.Itoa(i),
			ResourceID: "pay-" + strconv.Itoa(i), AmountMinor: int64(i), Currency: "USD", At: at})
	}
	e.srv.PlantMany(planted)
	from, to := day, day.Add(24*time.Hour)

	q := url.Values{"from": {from.Format(time.RFC3339Nano)}, "to": {to.Format(time.RFC3339Nano)}, "limit": {"1000"}}
	resp, body := e.raw("GET", "/v1/ledger?"+q.Encode(), "", "", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var v wire.LedgerView
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	require.Len(t, v.Entries, 1000)
	require.True(t, v.HasMore)
	q.Set("after", strconv.FormatInt(v.Entries[999].Seq, 10))
	q.Set("limit", "5000")
	_, body = e.raw("GET", "/v1/ledger?"+q.Encode(), "", "", "")
	v = wire.LedgerView{}
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	require.Len(t, v.Entries, 2250-1000)
	require.False(t, v.HasMore)
	for _, bad := range []string{"limit=-1", "limit=10001", "limit=x", "after=-3", "after=1e9x"} {
		resp, _ := e.raw("GET", "/v1/ledger?"+bad, "", "", "")
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, bad)
	}

	seen := map[string]int{}
	require.NoError(t, e.a.Movements(context.Background(), from, to, func(m provider.Movement) error {
		seen[m.OperationID]++
		require.Equal(t, "pay-"+strings.TrimPrefix(m.OperationID, "op-"), m.PaymentRef)
		return nil
	}))
	require.Len(t, seen, 2250, "every entry of the window, over three pages")
	for id, n := range seen {
		require.Equal(t, 1, n, id)
	}
}
