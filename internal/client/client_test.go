package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/signature"
)

// TestNoSilentResend: when a reused connection breaks after the server read
// a POST, the resend is Do's, signed with a new nonce, never net/http's copy
// of the first (which the server would refuse as a replay).
func TestNoSilentResend(t *testing.T) {
	var mu sync.Mutex
	var nonces []string
	var posts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		nonces = append(nonces, r.Header.Get(signature.HeaderNonce))
		if r.Method == http.MethodPost {
			posts++
		}
		first := r.Method == http.MethodPost && posts == 1
		mu.Unlock()
		if first { // the server dies with the request read: no answer
			conn, _, err := w.(http.Hijacker).Hijack()
			require.NoError(t, err)
			conn.Close()
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	c := New(srv.URL, "ak_test", "sk_test")
	c.Retries = 3
	ctx := context.Background()
	// A GET first, so the POST goes out on a reused connection: the case
	// in which net/http would resend it by itself.
	_, err := c.Do(ctx, Request{Method: "GET", Target: "/a"})
	require.NoError(t, err)
	resp, err := c.Do(ctx, Request{Method: "POST", Target: "/b", Body: []byte(`{}`)})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.Status)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, nonces, 3, "the GET, the POST whose answer was lost, Do's retry")
	seen := map[string]bool{}
	for _, n := range nonces {
		require.False(t, seen[n], "a nonce was sent twice")
		seen[n] = true
	}
}

// TestGetNonceReusedIsAskedAgain: a 401 nonce_reused on a read can only be
// net/http's resend of an earlier copy; the read is asked again.
func TestGetNonceReusedIsAskedAgain(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":"nonce_reused","message":"m","retryable":false}}`))
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	c := New(srv.URL, "ak_test", "sk_test")
	c.Retries = 2
	resp, err := c.Do(context.Background(), Request{Method: "GET", Target: "/x"})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.Status)
	require.Equal(t, 2, calls)
}
