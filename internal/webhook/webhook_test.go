package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/fault"
)

func TestSchedule(t *testing.T) {
	none := func(d time.Duration) time.Duration { return d }
	first := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	// docs/design/decisions.md section 6: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
	// 10 h, then every 12 h up to 3 days after the first attempt.
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 10 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour}
	at, n := first, 0
	for {
		next, ok := NextAttempt(first, at, n+1, 0, none)
		if !ok {
			break
		}
		require.Less(t, n, len(want), "more attempts than the schedule has")
		require.Equal(t, want[n], next.Sub(at), "after attempt %d", n+1)
		at, n = next, n+1
	}
	require.Equal(t, len(want), n, "11 attempts in all, the last %s after the first", at.Sub(first))
	require.LessOrEqual(t, at.Sub(first), RetryWindow)

	t.Run("Retry-After postpones, bounded, never hastens", func(t *testing.T) {
		next, _ := NextAttempt(first, first, 1, time.Minute, none)
		require.Equal(t, time.Minute, next.Sub(first))
		next, _ = NextAttempt(first, first, 3, time.Minute, none)
		require.Equal(t, 30*time.Minute, next.Sub(first))
		next, _ = NextAttempt(first, first, 1, 48*time.Hour, none)
		require.Equal(t, MaxRetryAfter, next.Sub(first))
	})
	t.Run("jitter stays within 10 %", func(t *testing.T) {
		for range 1000 {
			d := Jitter(time.Hour)
			require.GreaterOrEqual(t, d, 54*time.Minute)
			require.LessOrEqual(t, d, 66*time.Minute)
		}
	})
}

func TestForbidden(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.10": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true,
		"172.31.255.255": true, "192.168.1.1": true, "fd00::1": true, "fc00::1": true, "169.254.169.254": true,
		"fe80::1": true, "0.0.0.0": true, "::": true, "224.0.0.1": true, "ff02::1": true, "::ffff:10.0.0.1": true,
		"::ffff:127.0.0.1": true, "100.64.0.1": true, "255.255.255.255": true, "0.1.2.3": true,
		"93.184.216.34": false, "8.8.8.8": false, "172.32.0.1": false, "2606:4700::1111": false, "::ffff:8.8.8.8": false,
	} {
		require.Equal(t, want, Forbidden(netip.MustParseAddr(addr)), addr)
	}
}

// fakeResolver answers from a table.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, ip := range ips {
		out = append(out, netip.MustParseAddr(ip))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	r := fakeResolver{"public.example": {"93.184.216.34"}, "inside.example": {"93.184.216.34", "10.0.0.5"}}
	ctx := context.Background()
	for _, tc := range []struct {
		url                 string
		sandbox, production bool
	}{
		{"https://public.example/hooks", true, true},
		{"https://unresolvable.example/hooks", true, true}, // checked again at delivery
		{"https://93.184.216.34:8443/h?x=1", true, true},
		{"http://public.example/hooks", true, false},
		{"http://localhost:3000/hooks", true, false},
		{"https://localhost/hooks", true, false},
		{"https://api.localhost/hooks", true, false},
		{"https://127.0.0.1/hooks", true, false},
		{"https://[::1]/hooks", true, false},
		{"https://10.0.0.1/hooks", true, false},
		{"https://169.254.169.254/latest", true, false},
		{"https://[fd12::1]/hooks", true, false},
		{"https://inside.example/hooks", true, false},
		{"https://user:pass@public.example/hooks", false, false},
		{"https://public.example/hooks#frag", false, false},
		{"ftp://public.example/hooks", false, false},
		{"/relative", false, false},
		{"https://", false, false},
		{"not a url", false, false},
	} {
		for _, production := range []bool{false, true} {
			want := tc.sandbox
			if production {
				want = tc.production
			}
			err := CheckURL(ctx, tc.url, production, r)
			if want {
				require.NoError(t, err, "%s production=%v", tc.url, production)
				continue
			}
			f, ok := fault.As(err)
			require.True(t, ok, "%s production=%v: %v", tc.url, production, err)
			require.Equal(t, fault.ValidationError, f.Code)
			require.Equal(t, "url", f.Field)
			require.NotContains(t, f.Message, "pass", "the message never repeats the URL")
		}
	}
}

func TestTypes(t *testing.T) {
	for _, ok := range []string{"payment.succeeded", "payout.requires_action", "card_verification.code_sent",
		"subscription.past_due", "mandate.active"} {
		require.True(t, ValidType(ok), ok)
	}
	for _, bad := range []string{"", "payment", "payment.", "charge.succeeded", "payment.Succeeded", "payment.*", "payment.a.b"} {
		require.False(t, ValidType(bad), bad)
	}
	e := Endpoint{}
	require.True(t, e.Wants("payment.failed"), "no filter takes every type")
	e.EventTypes = []string{"payment.succeeded"}
	require.True(t, e.Wants("payment.succeeded"))
	require.False(t, e.Wants("payment.failed"))
}

func TestSign(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	require.True(t, ValidSecret(a))
	require.NotEqual(t, a, b)
	require.True(t, strings.HasPrefix(a, "whsec_"))
	require.False(t, ValidSecret("whsec_short"))
	require.False(t, ValidSecret(strings.TrimPrefix(a, "whsec_")))

	at := time.Now()
	body := []byte(`{"id":"e","type":"payment.succeeded"}`)
	h, err := SignedHeaders([]string{a, b}, "evt-1", at, body)
	require.NoError(t, err)
	require.Len(t, strings.Split(h[HeaderSignature], " "), 2, "both secrets sign during an overlap")
	require.Equal(t, strconv.FormatInt(at.Unix(), 10), h[HeaderTimestamp])
	header := http.Header{}
	for k, v := range h {
		header.Set(k, v)
	}
	for _, secret := range []string{a, b} {
		wh, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		require.NoError(t, wh.Verify(body, header), "each secret verifies alone")
		require.Error(t, wh.Verify([]byte(`{"id":"x"}`), header))
	}
	other, _ := standardwebhooks.NewWebhook(NewSecret())
	require.Error(t, other.Verify(body, header))
}
