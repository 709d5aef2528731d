package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
)

// directTarget is the endpoint both storms hit.
const directTarget = "/api/v1/payments/direct"

// duplicateStorm sends n identical direct payments at once, with one
// Idempotency-Key, each signed afresh (a new nonce), spread over the API
// processes. docs/design/decisions.md section 2 allows three answers: the
// first request's 201; that answer replayed byte for byte
// (Idempotent-Replayed: true) once it has finished; 409
// idempotency_request_in_progress (retryable) while it is executing. Anything
// else fails the check, and so does more than one payment for the order or
// more than one charge at the acquirer.
func duplicateStorm(ctx context.Context, c checkConfig) (checkResult, error) {
	res := checkResult{name: "duplicate-storm", pass: true}
	n := cmp.Or(c.n, 1000)
	f, err := startFleet(ctx, c)
	if err != nil {
		return res, err
	}
	defer f.close()

	order, amount := "dup-storm-"+uuid.NewString()[:8], int64(4711)
	body, key := directPayment(order, amount, "5555555555554444"), "dup-storm-"+uuid.NewString()
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = f.signedPost(ctx, f.api[i%len(f.api)].url(), directTarget, body, key)
	}
	res.add("processes", "%s", f.describe())
	res.add("requests", "%d at once, one Idempotency-Key and body, each signed afresh, spread over %d API process(es)", n, len(f.api))
	replies, took := burst(reqs)
	res.add("answers", "%s", tally(replies))
	if len(f.api) > 1 {
		for k, nd := range f.api {
			var mine []reply
			for i := k; i < len(replies); i += len(f.api) {
				mine = append(mine, replies[i])
			}
			res.add("answers of "+nd.name, "%s", tally(mine))
		}
	}
	res.add("storm took", "%s", took.Round(time.Millisecond))

	var first []byte
	stored := map[string]bool{}
	for _, r := range replies {
		switch {
		case r.status == http.StatusCreated && !r.replayed:
			if first != nil {
				res.fail("more than one request executed (two 201 without Idempotent-Replayed)")
			}
			first = r.body
			stored[string(r.body)] = true
		case r.status == http.StatusCreated:
			stored[string(r.body)] = true
		case r.status == http.StatusConflict && r.code == "idempotency_request_in_progress" && r.retryable:
		default:
			res.fail("an answer decisions 2 does not allow: %s %s", r.label(), truncate(r.body, 200))
		}
	}
	if first == nil {
		res.fail("no request executed")
		return res, nil
	}
	if len(stored) != 1 {
		res.fail("the replays differ from the first answer (%d distinct bodies)", len(stored))
	}
	// A retry after the storm, signed afresh, gets the stored answer.
	late := sendOnce(http.DefaultClient, f.signedPost(ctx, f.api[len(f.api)-1].url(), directTarget, body, key))
	res.add("a later retry", "%s, same body: %t", late.label(), bytes.Equal(late.body, first))
	if late.status != http.StatusCreated || !late.replayed || !bytes.Equal(late.body, first) {
		res.fail("a later retry was not the stored answer: %s", late.label())
	}
	return settleOne(ctx, f, res, first, order, amount)
}

// replayStorm sends one signed request (same nonce, signature, headers and
// body) n times at once over the API processes. docs/design/decisions.md
// section 1: a nonce is single-use per key across every process, so exactly
// one is accepted and every other copy is 401 nonce_reused; one payment, one
// charge.
func replayStorm(ctx context.Context, c checkConfig) (checkResult, error) {
	res := checkResult{name: "replay-storm", pass: true}
	n := cmp.Or(c.n, 1000)
	f, err := startFleet(ctx, c)
	if err != nil {
		return res, err
	}
	defer f.close()

	order, amount := "replay-storm-"+uuid.NewString()[:8], int64(4712)
	body := directPayment(order, amount, "4242424242424242")
	signed := f.signedPost(ctx, f.api[0].url(), directTarget, body, "replay-storm-"+uuid.NewString())
	reqs := make([]*http.Request, n)
	for i := range reqs {
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.api[i%len(f.api)].url()+directTarget, bytes.NewReader(body))
		r.GetBody, r.Header = nil, signed.Header.Clone()
		reqs[i] = r
	}
	res.add("processes", "%s", f.describe())
	res.add("requests", "%d copies of one signed request at once, spread over %d API process(es)", n, len(f.api))
	replies, took := burst(reqs)
	res.add("answers", "%s", tally(replies))
	res.add("storm took", "%s", took.Round(time.Millisecond))

	var accepted []byte
	for _, r := range replies {
		switch {
		case r.status == http.StatusCreated && !r.replayed && accepted == nil:
			accepted = r.body
		case r.status == http.StatusUnauthorized && r.code == "nonce_reused":
		default:
			res.fail("an answer other than one 201 and 401 nonce_reused: %s %s", r.label(), truncate(r.body, 200))
		}
	}
	if accepted == nil {
		res.fail("no copy was accepted")
		return res, nil
	}
	return settleOne(ctx, f, res, accepted, order, amount)
}

// settleOne waits for the storm's payment to succeed, then counts the
// payments of the order (the list API) and the acquirer's charges of its
// amount: one each.
func settleOne(ctx context.Context, f *fleet, res checkResult, created []byte, order string, amount int64) (checkResult, error) {
	var p struct {
		PaymentID string `json:"payment_id"`
	}
	if err := json.Unmarshal(created, &p); err != nil || p.PaymentID == "" {
		res.fail("the 201 has no payment_id: %s", truncate(created, 200))
		return res, nil
	}
	started := time.Now()
	got, err := f.waitFinal(ctx, p.PaymentID, time.Minute)
	if err != nil {
		return res, err
	}
	res.add("payment", "%s %s after %s", p.PaymentID, got.Status, time.Since(started).Round(time.Millisecond))
	if got.Status != "succeeded" {
		res.fail("the payment is %s, not succeeded, a minute later", got.Status)
	}
	list, err := f.payments(ctx, url.Values{"order_id": {order}})
	if err != nil {
		return res, err
	}
	res.add("payments for the order", "%d", len(list))
	if len(list) != 1 {
		res.fail("%d payments for the order, want 1", len(list))
	}
	charges := f.charges(acquirer.EntryCharge)
	total := 0
	for _, k := range charges {
		total += k
	}
	res.add("acquirer charges", "%d (ledger, all kinds: %d entries)", charges[amount], len(f.acq.Server.Ledger()))
	if charges[amount] != 1 || total != 1 {
		res.fail("%d charges at the acquirer (%d of the amount), want 1", total, charges[amount])
	}
	return res, nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
