package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/signature"
)

// bareCeiling is the rate of a bare net/http handler that does only what
// every Paygate request does before any database: the HMAC check and the
// JSON decode of the body.
type bareCeiling struct {
	rate     float64 // 2xx per second
	workers  int
	wire     string // the wire type decoded, "" for none
	duration time.Duration
}

// wireType is the openapi type a scenario's body decodes into (nil: the
// scenario sends no body).
func wireType(scenario string) (name string, fresh func() any) {
	switch scenario {
	case "sessions":
		return "openapi.CreatePayment", func() any { return new(openapi.CreatePayment) }
	case "direct", "direct-complete":
		return "openapi.DirectPayment", func() any { return new(openapi.DirectPayment) }
	case "payouts":
		return "openapi.CreatePayout", func() any { return new(openapi.CreatePayout) }
	}
	return "", nil
}

// bareHandler verifies the signature of the request as Paygate does
// (internal/server/auth.go, with the secret known instead of read) and
// decodes the body into the wire type, then answers a small JSON.
func bareHandler(secret string, fresh func() any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		if err != nil {
			http.Error(w, `{"error":"body"}`, http.StatusBadRequest)
			return
		}
		h := r.Header
		ts, nonce := h.Get(signature.HeaderTimestamp), h.Get(signature.HeaderNonce)
		inRange, _ := signature.CheckTimestamp(ts, time.Now())
		canonical := signature.Canonical(r.Method, r.RequestURI, h.Get(signature.HeaderAccessKey), ts, nonce, body)
		if !signature.ValidNonce(nonce) || !inRange || !signature.Verify(secret, canonical, h.Get(signature.HeaderSignature)) {
			http.Error(w, `{"error":"signature"}`, http.StatusUnauthorized)
			return
		}
		if fresh != nil {
			if err := json.Unmarshal(body, fresh()); err != nil {
				http.Error(w, `{"error":"json"}`, http.StatusBadRequest)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
}

// measureBareCeiling serves bareHandler on loopback in this process and
// drives it with the scenario's own signed requests at vegeta's maximum
// rate (Rate{Freq: 0}) from a fixed number of workers for d.
func measureBareCeiling(ctx context.Context, scenario, secret string, tr vegeta.Targeter, from string, workers int, d time.Duration) (bareCeiling, error) {
	name, fresh := wireType(scenario)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return bareCeiling{}, err
	}
	srv := &http.Server{Handler: bareHandler(secret, fresh), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Shutdown(context.WithoutCancel(ctx))
	to := "http://" + ln.Addr().String()
	rebased := func(t *vegeta.Target) error {
		if err := tr(t); err != nil {
			return err
		}
		// The signature covers the request target, not the host.
		t.URL = to + strings.TrimPrefix(t.URL, from)
		return nil
	}
	attacker := vegeta.NewAttacker(vegeta.Workers(uint64(workers)), vegeta.MaxWorkers(uint64(workers)),
		vegeta.KeepAlive(true), vegeta.Timeout(10*time.Second))
	var m vegeta.Metrics
	for res := range attacker.Attack(rebased, vegeta.Rate{Freq: 0}, d, "bare") {
		m.Add(res)
		if ctx.Err() != nil {
			attacker.Stop()
		}
	}
	m.Close()
	if m.Requests == 0 {
		return bareCeiling{}, errors.New("bare handler ceiling: no requests")
	}
	if m.Success < 1 {
		return bareCeiling{}, fmt.Errorf("bare handler ceiling: success %.2f%% (statuses %v, errors %v)", m.Success*100, m.StatusCodes, m.Errors)
	}
	return bareCeiling{rate: m.Throughput, workers: workers, wire: name, duration: d}, nil
}
