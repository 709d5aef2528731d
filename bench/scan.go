package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
)

// The canaries (docs/design/decisions.md section 8: none of them may appear
// in a log, an answer, a webhook, an error, or the database once the provider
// has seen them): a Luhn-valid Visa number no test table knows, a CVV, a
// mobile number, two one-time codes, and a marker inside a wallet payload.
const (
	canaryCard      = "4000056655665556"
	canaryCVV       = "8317"
	canaryPhone     = "+12025557391"     // any number but the declining one needs a code (docs/sandbox.md)
	canaryOTP       = "48213597"         // a wrong code: the payment declines, the code must vanish all the same
	canaryVerify    = "90817263"         // a wrong verification code
	canaryPayoutOTP = "52917364"         // a wrong code for a challenged payout
	payout3DSCard   = "4000000000003220" // the sandbox's challenged payout card: a card number all the same
	canaryWallet    = "wallet-canary-7c41e9"
	canaryMask      = "400005******5556" // what must remain of the card: a control
	pciOrderPrefix  = "pci-"
)

// pciBOLA runs the PCI canary and the BOLA probe on one Paygate (debug
// logging): key A pays with canary data along every path that takes card
// data and is served, its resources are then probed with key B on every
// path of the OpenAPI document that has an {id}, and last the database,
// the process's output, River's job arguments, the events and the
// delivered webhooks are scanned for the canaries.
func pciBOLA(ctx context.Context, c checkConfig) (checkResult, error) {
	res := checkResult{name: "pci-bola", pass: true}
	pg, err := startChecked(ctx, c, "pci", paygateSpec{args: []string{"--log-level", "debug"}})
	if err != nil {
		return res, err
	}
	defer pg.close()
	rcv, ep, err := registerHookReceiver(ctx, pg.client, &outageClock{})
	if err != nil {
		return res, err
	}
	defer rcv.close()
	f := &pciFlows{ctx: ctx, cl: pg.client, ids: map[string][]string{"webhook-endpoints": {ep.ID}}}
	if err := f.run(); err != nil {
		return res, err
	}

	// Every event must have reached the receiver before the scan reads it.
	events, err := f.events(rcv)
	if err != nil {
		return res, err
	}
	keyB, err := secondKey(ctx, pg)
	if err != nil {
		return res, err
	}
	bola, err := probeBOLA(ctx, pg.client, keyB, f.ids)
	if err != nil {
		return res, err
	}
	savedCards, err := f.probeSavedCards(keyB)
	if err != nil {
		return res, err
	}
	pg.stop() // a graceful stop: SQLite's WAL is checkpointed, logs flushed
	sources, err := pciSources(ctx, pg, f.answers.String(), events, rcv.body())
	if err != nil {
		return res, err
	}
	scan := scanCanaries(sources)

	res.add("flows", "%s", strings.Join(f.flows, ", "))
	if len(f.notServed) > 0 {
		res.add("not served", "%s (404: nothing to carry canaries through yet)", strings.Join(f.notServed, ", "))
	}
	res.add("bytes scanned", "%s", scan.sizes())
	res.add("canary hits", "%d", len(scan.hits))
	res.add("controls", "%s", scan.controls())
	res.add("endpoints probed", "%d paths with {id} × %d of key A's ids = %d requests with key B; B's POST /subscriptions on A's mandate; and B's checkout page for A's payer (saved cards)",
		bola.paths, bola.ids, bola.probes)
	res.add("non-404s", "%d", len(bola.failures))
	res.add("paths without an id of their kind", "%d %v", len(bola.uncovered), bola.uncovered)
	res.add("saved card across keys", "%d problems", len(savedCards))
	for _, h := range scan.hits {
		res.fail("canary %s", h)
	}
	for _, m := range scan.missing {
		res.fail("control %s", m)
	}
	for _, b := range bola.failures {
		res.fail("BOLA: %s", b)
	}
	for _, b := range savedCards {
		res.fail("BOLA: %s", b)
	}
	for _, p := range bola.uncovered {
		// The routes whose ids the flows above create must be probed with
		// one (docs/reliability.md, "PCI canary and BOLA": payouts,
		// verifications, saved cards, subscriptions, mandates); the others
		// are shown in the figures.
		if slices.Contains([]string{"payouts", "card-verifications", "saved-cards", "subscriptions", "mandates"},
			ownKind(strings.Fields(p)[1])) {
			res.fail("BOLA: %s probed with no id of its own kind", p)
		}
	}
	for _, b := range bola.controlFailures {
		res.fail("BOLA control: %s", b)
	}
	return res, nil
}

// pciFlows runs key A's payments with canary data and keeps every answer
// (bodies, pages, URLs) and the ids of what it created, by the path
// segment that names the resource (payments, payment-sessions, …).
type pciFlows struct {
	ctx       context.Context
	cl        *client.Client
	answers   strings.Builder
	ids       map[string][]string
	payments  []string
	flows     []string
	notServed []string
}

func (f *pciFlows) do(method, target, body string) (*client.Response, error) {
	resp, err := f.cl.Do(f.ctx, client.Request{Method: method, Target: target, Body: []byte(body)})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, target, err)
	}
	f.answers.Write(resp.Body)
	f.answers.WriteByte('\n')
	return resp, nil
}

// payment sends a payment request and keeps the ids its answer names.
func (f *pciFlows) payment(name, target, body string, want int) (openapi.Payment, error) {
	var p openapi.Payment
	resp, err := f.do("POST", target, body)
	if err != nil {
		return p, err
	}
	if resp.Status != want {
		return p, fmt.Errorf("%s: %d %s", name, resp.Status, truncate(resp.Body, 300))
	}
	f.flows = append(f.flows, name)
	if want/100 != 2 {
		return p, nil
	}
	if err := json.Unmarshal(resp.Body, &p); err != nil {
		return p, err
	}
	f.payments = append(f.payments, p.PaymentID)
	f.keepPayment(p)
	return p, nil
}

// keepPayment keeps the ids a payment's answer names.
func (f *pciFlows) keepPayment(p openapi.Payment) {
	f.keep("payments", p.PaymentID)
	f.keep("payment-sessions", p.SessionID)
	f.keep("saved-cards", p.SavedCardID)
	f.keep("mandates", p.MandateID)
	f.keep("subscriptions", p.SubscriptionID)
}

func (f *pciFlows) keep(kind, id string) {
	if id != "" && !slices.Contains(f.ids[kind], id) {
		f.ids[kind] = append(f.ids[kind], id)
	}
}

func (f *pciFlows) run() error {
	year := time.Now().Year() + 1
	customer := `"customer":{"first_name":"Pci","last_name":"Canary","email":"pci@example.com","billing_address":{"country":"GB","line1":"1 Canary Wharf"}}`
	card := func(order, extra string) string {
		return fmt.Sprintf(`{"order_id":%q,"amount_minor":4100,"currency":"USD",%s%s,
			"payment_method":{"type":"card","card":{"number":%q,"expire_month":11,"expire_year":%d,"cvv":%q,"cardholder":"Pci Canary"}}}`,
			pciOrderPrefix+order, customer, extra, canaryCard, year, canaryCVV)
	}
	direct := "/api/v1/payments/direct"
	steps := []struct {
		name, target, body string
		want               int
	}{
		{"card charge + saved card", direct, card("charge", `,"customer_reference":"pci-payer","save_payment_method":true`), 201},
		{"card authorize", direct, card("authorize", `,"operation_mode":"authorize"`), 201},
		{"card + subscription", direct, card("subscription", fmt.Sprintf(`,"customer_reference":"pci-payer","subscription":{"interval_unit":"month","interval_count":1,"first_charge_at":"%d-01-01T00:00:00Z","disclosure_version":"v1"}`, year)), 201},
		{"mobile + one-time code", direct, fmt.Sprintf(`{"order_id":"pci-mobile","amount_minor":4200,"currency":"USD","payment_method":{"type":"mobile","mobile":{"phone":%q}}}`,
			strings.Replace(canaryPhone, "+1", "+1 ", 1)), 201},
		{"wallet", direct, fmt.Sprintf(`{"order_id":"pci-wallet","amount_minor":4300,"currency":"USD","payment_method":{"type":"apple_pay","wallet":{"token":"sandbox_success","extra":%q}}}`, canaryWallet), 201},
		{"card number in an unknown field", direct, strings.Replace(card("unknown-field", ""), `"amount_minor"`, `"nick":"`+canaryCard+`","amount_minor"`, 1), 400},
		{"card number failing Luhn", direct, strings.Replace(card("luhn", ""), canaryCard, canaryCard[:15]+"1", 1), 400},
		{"CVV too long", direct, strings.Replace(card("cvv", ""), `"cvv":"`+canaryCVV+`"`, `"cvv":"`+canaryCVV+canaryCVV+`"`, 1), 400},
	}
	for _, s := range steps {
		if _, err := f.payment(s.name, s.target, s.body, s.want); err != nil {
			return err
		}
	}
	if err := f.checkoutPage(year); err != nil {
		return err
	}
	if err := f.checkoutMobile(); err != nil {
		return err
	}
	if err := f.verification(year); err != nil {
		return err
	}
	if err := f.payout(year); err != nil {
		return err
	}
	if _, err := f.do("GET", "/api/v1/cards/information?bin="+canaryCard[:8], ""); err != nil {
		return err
	}
	if err := f.finish(); err != nil {
		return err
	}
	return f.subscriptions()
}

// subscriptions carries the canary card's mandate (made by the payment
// with terms) through the subscription endpoints: the mandate and its
// subscription read back, another schedule on the mandate charged once by
// a clock advance (a merchant-initiated payment on the saved canary card),
// paused and resumed. Every answer is kept for the scan, and the new
// subscription is one more id for the BOLA probe.
func (f *pciFlows) subscriptions() error {
	if len(f.ids["mandates"]) == 0 || len(f.ids["subscriptions"]) == 0 {
		return fmt.Errorf("the payment with terms named no mandate or subscription")
	}
	mandate := f.ids["mandates"][0]
	ok := func(method, target, body string) ([]byte, error) {
		resp, err := f.do(method, target, body)
		if err != nil {
			return nil, err
		}
		if resp.Status/100 != 2 {
			return nil, fmt.Errorf("%s %s: %d %s", method, target, resp.Status, truncate(resp.Body, 300))
		}
		return resp.Body, nil
	}
	for _, target := range []string{"/api/v1/mandates/" + mandate, "/api/v1/subscriptions/" + f.ids["subscriptions"][0]} {
		if _, err := ok("GET", target, ""); err != nil {
			return err
		}
	}
	body, err := ok("POST", "/api/v1/subscriptions", fmt.Sprintf(`{"mandate_id":%q,"amount_minor":4700,"currency":"USD",
		"interval_unit":"day","interval_count":1}`, mandate))
	if err != nil {
		return err
	}
	var sub openapi.Subscription
	if err := json.Unmarshal(body, &sub); err != nil {
		return err
	}
	f.keep("subscriptions", sub.ID)
	// Due at once: the advance charges period 0 and waits for its outcome.
	if _, err := ok("POST", "/api/v1/sandbox/clock/advance", `{"seconds":3600}`); err != nil {
		return err
	}
	for _, action := range []string{"pause", "resume"} {
		if _, err := ok("POST", "/api/v1/subscriptions/"+sub.ID+"/"+action, ""); err != nil {
			return err
		}
	}
	if body, err = ok("GET", "/api/v1/subscriptions/"+sub.ID, ""); err != nil {
		return err
	}
	if err := json.Unmarshal(body, &sub); err != nil {
		return err
	}
	if sub.NextPeriod != 1 {
		return fmt.Errorf("subscription %s: next period %d after the advance, want 1 (period 0 charged)", sub.ID, sub.NextPeriod)
	}
	f.flows = append(f.flows, "subscription charge on the saved canary card (clock advance), pause, resume")
	left, err := waitAllFinal(f.ctx, f.cl, time.Minute)
	if err != nil {
		return err
	}
	if left > 0 {
		return fmt.Errorf("%d payments not final after the subscription charge", left)
	}
	_, err = f.do("GET", "/api/v1/payments?limit=100", "") // the charge, as listed
	return err
}

// finish drives every payment to a final status: the one-time code of the
// mobile payment (the canary: a wrong one), the capture of the hold, the
// cancel of a hosted session left open by a declined attempt.
func (f *pciFlows) finish() error {
	for _, id := range f.payments {
		var p openapi.Payment
		deadline := time.Now().Add(time.Minute)
		for {
			resp, err := f.do("GET", "/api/v1/payments/"+id, "")
			if err != nil {
				return err
			}
			p = openapi.Payment{}
			if err := json.Unmarshal(resp.Body, &p); err != nil {
				return err
			}
			if p.Final || p.Status == "requires_action" || p.Status == "authorized" || p.Status == "awaiting_payment_data" {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("payment %s still %s after a minute", id, p.Status)
			}
			if err := sleepCtx(f.ctx, 20*time.Millisecond); err != nil { // polling the payment's status
				return err
			}
		}
		switch p.Status {
		case "requires_action":
			if _, err := f.do("POST", "/api/v1/payments/"+id+"/confirm", fmt.Sprintf(`{"value":%q}`, canaryOTP)); err != nil {
				return err
			}
		case "authorized":
			if _, err := f.do("POST", "/api/v1/payments/"+id+"/capture", ""); err != nil {
				return err
			}
		case "awaiting_payment_data": // a hosted session stays open after a declined attempt
			if _, err := f.do("POST", "/api/v1/payments/"+id+"/cancel", ""); err != nil {
				return err
			}
		}
	}
	left, err := waitAllFinal(f.ctx, f.cl, time.Minute)
	if err != nil {
		return err
	}
	if left > 0 {
		return fmt.Errorf("%d canary payments not final after a minute", left)
	}
	for _, id := range f.payments { // the final answers name the saved card
		resp, err := f.do("GET", "/api/v1/payments/"+id, "")
		if err != nil {
			return err
		}
		var p openapi.Payment
		if err := json.Unmarshal(resp.Body, &p); err != nil {
			return err
		}
		f.keepPayment(p)
	}
	_, err = f.do("GET", "/api/v1/payments?limit=100", "")
	return err
}

// events lists key A's events and waits until the receiver has each one.
func (f *pciFlows) events(rcv *hookReceiver) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		evs, err := readAllPages[json.RawMessage](f.ctx, f.cl, "/api/v1/events")
		if err != nil {
			return "", err
		}
		got := rcv.counts().delivered
		missing := 0
		var text strings.Builder
		for _, raw := range evs {
			var e struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(raw, &e)
			f.keep("events", e.ID)
			if got[e.ID] == 0 {
				missing++
			}
			text.Write(raw)
			text.WriteByte('\n')
		}
		if missing == 0 {
			return text.String(), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%d events not delivered to the receiver after a minute", missing)
		}
		if err := sleepCtx(f.ctx, 100*time.Millisecond); err != nil { // polling the receiver
			return "", err
		}
	}
}

// secondKey creates key B with the command line, beside the running server.
func secondKey(ctx context.Context, pg *checkedPaygate) (*client.Client, error) {
	args := []string{"keys", "create", "--name", "bola-b", "--json", "--data-dir", pg.spec.dataDir}
	if pg.spec.databaseURL != "" {
		args = append(args, "--database-url", pg.spec.databaseURL)
	}
	out, err := exec.CommandContext(ctx, pg.spec.bin, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("paygate keys create: %w", err)
	}
	var k struct {
		AccessKey string `json:"access_key"`
		Secret    string `json:"secret"`
	}
	if err := json.Unmarshal(out, &k); err != nil {
		return nil, fmt.Errorf("paygate keys create: %w in %q", err, out)
	}
	cl := client.New(pg.url, k.AccessKey, k.Secret)
	cl.Retries = 0
	return cl, nil
}
