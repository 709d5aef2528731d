package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/store/storetest"
)

// The request benchmarks run the whole API path in one process (signed
// request over loopback HTTP, pipeline, store), so a CPU profile of them
// shows where a request's time goes:
//
//	go test ./internal/server -run '^$' -bench Request -cpuprofile cpu.out
func BenchmarkRequest(b *testing.B) {
	session := `{"order_id":"bench","amount_minor":1999,"currency":"USD","description":"Benchmark tea"}`
	direct := fmt.Sprintf(`{"order_id":"bench","amount_minor":1999,"currency":"USD","customer":{"email":"bench@example.com"},
		"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
		time.Now().Year()+2)
	for _, db := range storetest.Databases(b) {
		for _, c := range []struct {
			name, path, body string
			work             bool // run the jobs too: the payments complete at the sandbox acquirer
		}{
			{"session", "/api/v1/payment-sessions", session, false},
			{"direct", "/api/v1/payments/direct", direct, false},
			{"direct-complete", "/api/v1/payments/direct", direct, true},
		} {
			b.Run(db.Name+"/"+c.name, func(b *testing.B) {
				e := newEnv(b, db, options{work: c.work})
				cl := e.a
				cl.Now = time.Now
				ctx := context.Background()
				b.SetParallelism(8)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := cl.JSON(ctx, "POST", c.path, json.RawMessage(c.body), nil); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
