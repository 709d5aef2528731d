package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/store"
)

// apiProcess starts a second API server on the env's database with its own
// pool, as `serve --role api` would be: it queues jobs and runs none.
func (e *env) apiProcess() string {
	e.t.Helper()
	cfg := e.cfg
	cfg.Store, cfg.Work = e.openPool(), false
	return e.process(cfg)
}

// process starts another Paygate process of cfg (built by the composition
// root, as serve builds one) and returns its URL.
func (e *env) process(cfg app.Config) string {
	e.t.Helper()
	p, err := app.New(cfg)
	require.NoError(e.t, err)
	hs := httptest.NewServer(p.Server)
	e.t.Cleanup(hs.Close)
	return hs.URL
}

// pool opens another pool on the env's database, as another process has
// one: it queues jobs (in its transactions) and runs none.
func (e *env) pool() *store.Store {
	e.t.Helper()
	cfg := e.cfg
	cfg.Store, cfg.Work = e.openPool(), false
	_, err := app.New(cfg) // its job queue, with every kind registered
	require.NoError(e.t, err)
	return cfg.Store
}

// openPool opens another pool on the env's database.
func (e *env) openPool() *store.Store {
	e.t.Helper()
	s, err := store.Open(context.Background(), e.dbConfig)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { s.Close() })
	return s
}

// clients returns one client of a new key per server URL.
func (e *env) clients(name string, channel string, urls ...string) []*client.Client {
	e.t.Helper()
	ctx := context.Background()
	k, err := e.merchants.Create(ctx, merchant.NewKey{Name: name, DirectCardData: true})
	require.NoError(e.t, err)
	if channel != "" {
		require.NoError(e.t, e.merchants.Unassign(ctx, k.Key.AccessKey, "sandbox"))
		require.NoError(e.t, e.merchants.Assign(ctx, k.Key.AccessKey, channel))
	}
	var out []*client.Client
	for _, u := range urls {
		c := client.New(u, k.Key.AccessKey, k.Secret)
		c.Now, c.Retries = e.clock.Now, 0
		out = append(out, c)
	}
	return out
}

// post is one POST of a race.
type post struct{ target, body string }

// posts is n copies of one POST.
func posts(n int, target, body string) []post {
	out := make([]post, n)
	for i := range out {
		out[i] = post{target, body}
	}
	return out
}

// race sends the requests at once (after a common start), spread over the
// clients, and returns the answers in request order.
func race(t *testing.T, cs []*client.Client, reqs []post) []*client.Response {
	t.Helper()
	out := make([]*client.Response, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, rq := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := cs[i%len(cs)].Do(context.Background(), client.Request{Method: "POST", Target: rq.target, Body: []byte(rq.body)})
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			out[i] = resp
		}()
	}
	close(start)
	wg.Wait()
	require.False(t, t.Failed())
	return out
}

// tally counts the answers by "status code" (and the field for 400s).
func tally(t *testing.T, rs []*client.Response) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, r := range rs {
		key := fmt.Sprint(r.Status)
		if r.Status != http.StatusOK {
			env := decodeError(t, r.Body)
			key += " " + env.Error.Code
			if env.Error.Field != nil {
				key += " " + *env.Error.Field
			}
		}
		n[key]++
	}
	return n
}
