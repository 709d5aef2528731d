package stripetest

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Balance is one of the fake's balance transactions, as a test reads it.
type Balance struct {
	ID            string
	Type          string // charge (a charge or a capture), refund
	OperationID   string // the Paygate operation the fake saw make it ("" when planted without one)
	PaymentIntent string // "" for a charge made without one
	AmountMinor   int64  // signed, as Stripe's: a refund's is negative
	Currency      string // lower-case, as Stripe's
	FeeMinor      int64
	At            time.Time
}

type balance struct {
	Balance
	seq    int
	source string // the charge's or refund's id
}

// Fee is what the fake charges for a charge: 2.9% + 30 (rounded), as
// Stripe's standard card pricing; a refund's fee is 0.
func Fee(amount int64) int64 { return (amount*29+500)/1000 + 30 }

// record writes the balance transaction of a charge's or a refund's money
// (amount signed) and links its source to it.
func (f *Fake) record(typ string, source object, op, pi string, amount int64, currency string, at time.Time) string {
	var fee int64
	if typ == "charge" {
		fee = Fee(amount)
	}
	id := f.id("txn")
	b := &balance{seq: f.seq, source: source["id"].(string), Balance: Balance{ID: id, Type: typ, OperationID: op,
		PaymentIntent: pi, AmountMinor: amount, Currency: strings.ToLower(currency), FeeMinor: fee, At: at.Truncate(time.Second)}}
	f.balances = append(f.balances, b)
	source["balance_transaction"] = b.ID
	return b.ID
}

// Balances lists every balance transaction so far, oldest first.
func (f *Fake) Balances() []Balance {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Balance, 0, len(f.balances))
	for _, b := range f.balances {
		out = append(out, b.Balance)
	}
	return out
}

// Plant is a balance transaction made behind Paygate's back: a charge
// (or, Type "refund", a refund) of PaymentIntent (a new PaymentIntent
// Paygate never made when empty) for AmountMinor in Currency at At (now
// when zero). A planted charge of a known PaymentIntent reads as that
// PaymentIntent's charge or capture again: a duplicate, or with another
// amount or currency, a mismatch; OperationID is the planted refund's
// metadata.
type Plant struct {
	Type          string
	PaymentIntent string
	OperationID   string
	AmountMinor   int64
	Currency      string
	At            time.Time
}

// Plant writes p into the fake's balance and returns the transaction's
// id; an unknown PaymentIntent panics (a broken test).
func (f *Fake) Plant(p Plant) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, currency := p.At, strings.ToLower(p.Currency)
	if at.IsZero() {
		at = f.now()
	}
	var in *intent
	if p.PaymentIntent == "" {
		in = f.newIntent(p.AmountMinor, currency, "automatic", f.newPM("4242424242424242", 12, 2040), "")
		in.object["status"], in.object["amount_received"] = "succeeded", p.AmountMinor
	} else if in = f.intents[p.PaymentIntent]; in == nil {
		panic("stripetest: Plant of an unknown PaymentIntent " + p.PaymentIntent)
	}
	o := in.object
	meta := o["metadata"].(map[string]string)
	if p.Type == "refund" {
		rf := object{"id": f.id("re"), "object": "refund", "amount": p.AmountMinor, "created": at.Unix(), "currency": currency,
			"payment_intent": o["id"], "charge": nil, "status": "succeeded",
			"metadata": map[string]string{"paygate_operation_id": p.OperationID}}
		f.refunds[rf["id"].(string)] = &rf
		return f.record("refund", rf, p.OperationID, o["id"].(string), -p.AmountMinor, currency, at)
	}
	ch := object{"id": f.id("ch"), "object": "charge", "amount": p.AmountMinor, "amount_captured": p.AmountMinor,
		"amount_refunded": int64(0), "billing_details": object{"address": nil, "email": nil, "name": nil, "phone": nil},
		"captured": true, "created": at.Unix(), "currency": currency, "disputed": false, "livemode": false,
		"metadata": maps.Clone(meta), "paid": true, "refunded": false, "status": "succeeded", "payment_intent": o["id"],
		"balance_transaction": nil, "payment_method_details": object{"type": "card", "card": object{"exp_month": 12, "exp_year": 2040}}}
	f.charges[ch["id"].(string)] = ch
	op := meta["paygate_operation_id"]
	if c := meta["paygate_capture_operation_id"]; c != "" {
		op = c
	}
	if o["latest_charge"] == nil {
		o["latest_charge"] = ch
	}
	return f.record("charge", ch, op, o["id"].(string), p.AmountMinor, currency, at)
}

// Drop removes a balance transaction, as though Stripe had never moved
// that money: how a test makes a movement missing at Stripe.
func (f *Fake) Drop(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.balances)
	f.balances = slices.DeleteFunc(f.balances, func(b *balance) bool { return b.ID == id })
	return len(f.balances) < n
}

// listBalance answers GET /v1/balance_transactions as Stripe does: newest
// first, filtered by created[gte|gt|lt|lte] and type, paged by limit
// (10 unless said, 100 at most) and starting_after, each source expanded
// with expand[]=data.source (and a charge's PaymentIntent with
// data.source.payment_intent).
func (f *Fake) listBalance(r *http.Request) (int, []byte) {
	q := r.Form
	bound := func(op string) (int64, bool) {
		s := q.Get("created[" + op + "]")
		n, err := strconv.ParseInt(s, 10, 64)
		return n, s != "" && err == nil
	}
	var rows []*balance
	for _, b := range f.balances {
		t := b.At.Unix()
		if n, ok := bound("gte"); ok && t < n {
			continue
		}
		if n, ok := bound("gt"); ok && t <= n {
			continue
		}
		if n, ok := bound("lt"); ok && t >= n {
			continue
		}
		if n, ok := bound("lte"); ok && t > n {
			continue
		}
		if typ := q.Get("type"); typ != "" && typ != b.Type {
			continue
		}
		rows = append(rows, b)
	}
	slices.SortStableFunc(rows, func(a, b *balance) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return b.seq - a.seq
	})
	if after := q.Get("starting_after"); after != "" {
		i := slices.IndexFunc(rows, func(b *balance) bool { return b.ID == after })
		if i < 0 {
			return http.StatusBadRequest, errBody("invalid_request_error", "resource_missing", "", "No such balance transaction: '"+after+"'")
		}
		rows = rows[i+1:]
	}
	limit := 10
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return http.StatusBadRequest, errBody("invalid_request_error", "parameter_invalid_integer", "", "Invalid limit: must be between 1 and 100.")
		}
		limit = n
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	exp := expand(q)
	data := make([]any, 0, len(rows))
	for _, b := range rows {
		data = append(data, f.renderBalance(b, slices.Contains(exp, "data.source"), slices.Contains(exp, "data.source.payment_intent")))
	}
	return ok(object{"object": "list", "url": "/v1/balance_transactions", "has_more": more, "data": data})
}

func (f *Fake) renderBalance(b *balance, source, intent bool) object {
	status, reporting := "pending", "charge"
	if b.Type == "refund" {
		reporting = "refund"
	}
	out := object{"id": b.ID, "object": "balance_transaction", "amount": b.AmountMinor, "available_on": b.At.Add(48 * time.Hour).Unix(),
		"balance_type": "payments", "created": b.At.Unix(), "currency": b.Currency, "description": nil, "exchange_rate": nil,
		"fee": b.FeeMinor, "fee_details": []any{}, "net": b.AmountMinor - b.FeeMinor, "reporting_category": reporting,
		"source": b.source, "status": status, "type": b.Type}
	if b.FeeMinor != 0 {
		out["fee_details"] = []any{object{"amount": b.FeeMinor, "application": nil, "currency": b.Currency,
			"description": "Stripe processing fees", "type": "stripe_fee"}}
	}
	if !source {
		return out
	}
	var src object
	if ch, ok := f.charges[b.source]; ok {
		src = maps.Clone(ch)
		if pi, ok := src["payment_intent"].(string); ok && intent && f.intents[pi] != nil {
			src["payment_intent"] = f.render(f.intents[pi], nil)
		}
	} else if rf, ok := f.refunds[b.source]; ok {
		src = maps.Clone(*rf)
	}
	if src != nil {
		out["source"] = src
	}
	return out
}
