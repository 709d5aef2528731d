package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/storetest"
)

// TestSandboxClockAcrossProcesses: a sandbox key's clock advanced through
// one API process is the other process's clock at once, for a key that
// process has just used (docs/design/decisions.md section 14;
// docs/signing.md, "Revoking a key": a sandbox process keeps no key).
func TestSandboxClockAcrossProcesses(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		second := e.apiProcess()
		cs := e.clients("clocked", "", e.url, second)
		before := e.keyNow(cs[1]) // the second process has read the key
		e.advance(cs[0], before.Add(30*24*time.Hour))
		after := e.keyNow(cs[1])
		require.False(t, after.Before(before.Add(30*24*time.Hour)), "second process: %s", after)
		s := createSession(t, cs[1], `{"order_id":"late","amount_minor":100,"currency":"USD"}`)
		require.False(t, s.CreatedAt.Std().Before(before.Add(30*24*time.Hour)), "created at %s", s.CreatedAt.Std())
	})
}
