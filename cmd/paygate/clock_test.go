package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
)

// setClockOffset writes the clock file as a test would: whole, by rename.
func setClockOffset(t *testing.T, path string, off time.Duration) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(off.String()+"\n"), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// reread makes c's next Now look at its file (due) or not (just read).
func reread(c *fileClock, due bool) *fileClock {
	c.mu.Lock()
	c.readAt = time.Now()
	if due {
		c.readAt = time.Time{}
	}
	c.mu.Unlock()
	return c
}

// offsetOf is how far c runs ahead of real time, to the second.
func offsetOf(c *fileClock) time.Duration {
	return c.Now().Sub(time.Now()).Round(time.Second)
}

func TestFileClock(t *testing.T) {
	t.Run("a missing file is no offset", func(t *testing.T) {
		c, err := newFileClock(filepath.Join(t.TempDir(), "clock"))
		require.NoError(t, err)
		require.Equal(t, time.Duration(0), offsetOf(c))
		require.NotNil(t, c.NowUTCOrNil(), "River must use this clock, not the database's")
		require.Equal(t, time.UTC, c.NowUTC().Location())
	})
	t.Run("the offset is read again and only moves forward", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "clock")
		setClockOffset(t, path, 2*time.Hour)
		c, err := newFileClock(path)
		require.NoError(t, err)
		require.Equal(t, 2*time.Hour, offsetOf(c))

		setClockOffset(t, path, 26*time.Hour+30*time.Minute)
		require.Equal(t, 2*time.Hour, offsetOf(reread(c, false)), "not read again before clockRereadEvery")
		require.Equal(t, 26*time.Hour+30*time.Minute, offsetOf(reread(c, true)))

		setClockOffset(t, path, time.Hour)
		require.Equal(t, 26*time.Hour+30*time.Minute, offsetOf(reread(c, true)), "backwards: ignored")
		require.NoError(t, os.WriteFile(path, []byte("soon"), 0o600))
		require.Equal(t, 26*time.Hour+30*time.Minute, offsetOf(reread(c, true)), "malformed: ignored")
		require.NoError(t, os.Remove(path))
		require.Equal(t, 26*time.Hour+30*time.Minute, offsetOf(reread(c, true)), "gone: ignored")
	})
	t.Run("a malformed file stops the start", func(t *testing.T) {
		for _, text := range []string{"tomorrow", "-1h", "5"} {
			path := filepath.Join(t.TempDir(), "clock")
			require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
			_, err := newFileClock(path)
			require.Error(t, err, text)
		}
	})
}

// TestClockHook: a server started with PAYGATE_CLOCK_FILE judges request
// timestamps by the moved clock, follows the file while it runs, and the
// production environment refuses the hook.
func TestClockHook(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "clock")
	setClockOffset(t, path, 48*time.Hour)
	srv := start(t, map[string]string{"PAYGATE_DATA_DIR": t.TempDir(), "PAYGATE_CLOCK_FILE": path})
	at := func(off time.Duration) *client.Client {
		c := client.New(srv.url, srv.accessKey, srv.secret)
		c.Retries = 0
		c.Now = func() time.Time { return time.Now().Add(off) }
		return c
	}
	require.NoError(t, at(48*time.Hour).JSON(ctx, "GET", "/api/v1/payment-channels", nil, nil))
	var apiErr *client.Error
	require.True(t, errors.As(at(0).JSON(ctx, "GET", "/api/v1/payment-channels", nil, nil), &apiErr))
	require.Equal(t, "timestamp_out_of_range", apiErr.Code, "the server's clock is two days ahead")

	setClockOffset(t, path, 72*time.Hour)
	require.Eventually(t, func() bool {
		return at(72*time.Hour).JSON(ctx, "GET", "/api/v1/payment-channels", nil, nil) == nil
	}, 10*time.Second, 20*time.Millisecond, "the running server follows the file")
	require.NoError(t, srv.stop())
	require.Contains(t, srv.stderr.String(), "PAYGATE_CLOCK_FILE")

	var stdout, stderr strings.Builder
	err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--environment", "production"},
		getenvFrom(map[string]string{"PAYGATE_CLOCK_FILE": path}), nil, &stdout, &stderr)
	require.ErrorContains(t, err, "production environment refuses it")
}
