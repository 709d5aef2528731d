package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/storetest"
)

// TestWebhooksAfterClockAdvance: an event of a key whose sandbox clock was
// advanced 20 days (a subscription's charge) is delivered at once, by the
// process's time, as webhook retries are (docs/design/decisions.md section
// 14); it used to wait the 20 days of the key's offset.
func TestWebhooksAfterClockAdvance(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		rc := newReceiver(t, ok)
		e.addEndpoint(e.a, rc.URL, "payment.succeeded")
		first := e.clock.Now().Add(time.Hour)
		_, sub := e.subscribe(e.a, "4242424242424242", first)
		e.advance(e.a, first.AddDate(0, 0, 20))
		charges := e.charges(e.aKey.ID, sub.ID)
		require.Len(t, charges, 1)
		e.await(0, func() error { // the process's clock standing still
			rc.mu.Lock()
			defer rc.mu.Unlock()
			for _, g := range rc.got {
				if strings.Contains(string(g.body), charges[0].ID) {
					return nil
				}
			}
			return fmt.Errorf("the charge %s's payment.succeeded was not delivered without moving the process's clock", charges[0].ID)
		})
	})
}
