// A Go merchant's program on the client oapi-codegen generates from the
// contract. TestOapiCodegenClient (internal/server/generated_clients_test.go)
// copies this folder into a temporary one, generates package oapiclient
// there from internal/openapi/openapi.yaml with oapi-codegen v2.8.2 and
// oapi-codegen.yaml, adds sign.go (the Go code of docs/signing.md, "Code",
// taken from that page: the functions signature and sign) and runs the
// program against a test server. Nothing generated is committed.
//
// Usage: go run . BASE_URL, with PAYGATE_ACCESS_KEY and PAYGATE_SECRET in
// the environment. Makes four calls through the generated client, signing
// each in a request editor, and prints one JSON object of what it read
// through the generated types; exits 1 when a call fails or an answer is
// not the one expected.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	"example.com/merchant/oapiclient"
)

// Output is what the program prints.
type Output struct {
	Created struct {
		PaymentID   string `json:"payment_id"`
		SessionID   string `json:"session_id"`
		Status      string `json:"status"`
		AmountMinor int64  `json:"amount_minor"`
		Currency    string `json:"currency"`
	} `json:"created"`
	Read struct {
		PaymentID string `json:"payment_id"`
		Status    string `json:"status"`
	} `json:"read"`
	Missing struct {
		HTTPStatus int    `json:"http_status"`
		Code       string `json:"code"`
	} `json:"missing"`
	Health struct {
		Version        string `json:"version"`
		ServiceVersion string `json:"service_version"`
	} `json:"health"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	accessKey, secret := os.Getenv("PAYGATE_ACCESS_KEY"), os.Getenv("PAYGATE_SECRET")
	if len(os.Args) != 2 || accessKey == "" || secret == "" {
		return fmt.Errorf("usage: PAYGATE_ACCESS_KEY=… PAYGATE_SECRET=… go run . BASE_URL")
	}
	// Sign every request with the exact bytes it sends; no resend by
	// net/http with the same nonce (docs/signing.md, "Timestamp and nonce").
	signEditor := func(_ context.Context, r *http.Request) error {
		var body []byte
		if r.Body != nil {
			var err error
			if body, err = io.ReadAll(r.Body); err != nil {
				return err
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		r.GetBody = nil
		sign(r, body, accessKey, secret)
		return nil
	}
	c, err := oapiclient.NewClientWithResponses(os.Args[1], oapiclient.WithRequestEditorFn(signEditor))
	if err != nil {
		return err
	}
	ctx := context.Background()
	var out Output

	description := "oapi-codegen client"
	created, err := c.CreatePaymentSessionWithResponse(ctx,
		&oapiclient.CreatePaymentSessionParams{IdempotencyKey: "oapi-" + rand.Text()},
		oapiclient.CreatePayment{OrderId: "oapi-" + rand.Text(), AmountMinor: 990, Currency: "EUR", Description: &description})
	if err != nil {
		return err
	}
	if created.StatusCode() != http.StatusCreated || created.JSON201 == nil || created.JSON201.SessionId == nil {
		return fmt.Errorf("create a payment session: %d %s", created.StatusCode(), created.Body)
	}
	p := created.JSON201
	out.Created.PaymentID, out.Created.SessionID = p.PaymentId.String(), p.SessionId.String()
	out.Created.Status, out.Created.AmountMinor, out.Created.Currency = string(p.Status), p.AmountMinor, p.Currency

	read, err := c.GetPaymentWithResponse(ctx, p.PaymentId)
	if err != nil {
		return err
	}
	if read.StatusCode() != http.StatusOK || read.JSON200 == nil {
		return fmt.Errorf("read the payment: %d %s", read.StatusCode(), read.Body)
	}
	out.Read.PaymentID, out.Read.Status = read.JSON200.PaymentId.String(), string(read.JSON200.Status)

	// A session id is no payment id: the error answer decodes into the
	// generated envelope.
	missing, err := c.GetPaymentWithResponse(ctx, *p.SessionId)
	if err != nil {
		return err
	}
	if missing.JSON404 == nil {
		return fmt.Errorf("read a session id as a payment: %d %s", missing.StatusCode(), missing.Body)
	}
	out.Missing.HTTPStatus, out.Missing.Code = missing.StatusCode(), missing.JSON404.Error.Code

	health, err := c.GetHealthWithResponse(ctx)
	if err != nil {
		return err
	}
	if health.JSON200 == nil {
		return fmt.Errorf("health: %d %s", health.StatusCode(), health.Body)
	}
	out.Health.Version, out.Health.ServiceVersion = health.JSON200.Version, health.JSON200.ServiceVersion

	return json.NewEncoder(os.Stdout).Encode(out)
}
