package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// syncBuffer is a log's output shared by request goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines are the log's "request" lines, by level and route.
func (s *syncBuffer) lines(t *testing.T) map[string]map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]map[string]int{}
	for _, l := range bytes.Split(bytes.TrimSpace(s.b.Bytes()), []byte("\n")) {
		var rec struct{ Level, Msg, Route string }
		require.NoError(t, json.Unmarshal(l, &rec))
		if rec.Msg != "request" {
			continue
		}
		if out[rec.Level] == nil {
			out[rec.Level] = map[string]int{}
		}
		out[rec.Level][rec.Route]++
	}
	return out
}

// TestPolledReadsLogAtDebug: `paygate listen` reads the event list every
// second; those answered reads are request lines at debug, every other
// request at info (docs/operations.md, "Logs").
func TestPolledReadsLogAtDebug(t *testing.T) {
	dbs := storetest.Databases(t)
	var buf syncBuffer
	e := newEnv(t, dbs[0], options{log: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := context.Background()
	var page openapi.EventList
	for range 3 {
		require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/events", nil, &page))
	}
	require.Error(t, e.a.JSON(ctx, "GET", "/api/v1/events?limit=0", nil, &page))
	resp := e.post(e.a, "/api/v1/payment-sessions", sessionBody)
	require.Equal(t, 201, resp.Status, "%s", resp.Body)

	got := buf.lines(t)
	require.Equal(t, 3, got["DEBUG"]["GET /api/v1/events"])
	require.Equal(t, 1, got["INFO"]["GET /api/v1/events"], "a refused read stays at info")
	require.Equal(t, 1, got["INFO"]["POST /api/v1/payment-sessions"])
}
