package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/openapi"
)

// failoverPayment is one payment the load offered: its amount (each its
// own, so the ledgers tell them apart) and what became of it.
type failoverPayment struct {
	amount    int64
	authorize bool
	cancel    bool      // a hold to be canceled once authorized, not captured
	save      bool      // it saves its card (save_payment_method)
	declining bool      // it has the card A declines with a reroutable decline
	id        string    // empty: not accepted
	answer    string    // the create answer's error, when not accepted
	captured  bool      // its capture was sent
	canceled  bool      // its cancel was sent
	whileDown bool      // its capture or cancel was sent while A was down
	sent      time.Time // when it was offered
	finalAt   time.Time // when settle first saw it final
	final     openapi.Payment
	attempts  []openapi.PaymentAttempt
}

// failoverLoad offers payments and keeps them by amount.
type failoverLoad struct {
	pg *checkedPaygate

	mu    sync.Mutex
	paid  map[int64]*failoverPayment
	next  int64 // the next payment's index
	first error
	// declines, when set, is the card of every tenth payment from now on:
	// one acquirer A declines with a decline it marks reroutable.
	declines string
	// saves: from now on every seventh payment saves its card, as a
	// charge (never a hold), for a payer of its own.
	saves bool
}

const failoverBaseAmount = int64(10_000)

func (l *failoverLoad) err() error { l.mu.Lock(); defer l.mu.Unlock(); return l.first }

// pay creates payment i: every third authorizes only, unless chargeOnly
// or it saves its card; every fourth hold is to be canceled
// (docs/reliability.md, Failover).
func (l *failoverLoad) pay(ctx context.Context, i int64, chargeOnly bool) *failoverPayment {
	p := &failoverPayment{amount: failoverBaseAmount + i, sent: time.Now()}
	number := "5555555555554444"
	l.mu.Lock()
	if l.declines != "" && i%10 == 5 {
		number, p.declining = l.declines, true
	}
	p.save = l.saves && i%7 == 3
	l.mu.Unlock()
	p.authorize = i%3 == 0 && !chargeOnly && !p.save
	p.cancel = p.authorize && i%12 == 6
	body := string(directCard(fmt.Sprintf("failover-%d", i), p.amount, number, "123"))
	switch {
	case p.authorize:
		body = strings.Replace(body, `"currency":"USD",`, `"currency":"USD","operation_mode":"authorize",`, 1)
	case p.save:
		body = strings.Replace(body, `"currency":"USD",`,
			fmt.Sprintf(`"currency":"USD","customer_reference":"failover-payer-%d","save_payment_method":true,`, i), 1)
	}
	var got openapi.Payment
	if err := l.pg.client.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &got); err != nil {
		p.answer = err.Error()
	} else {
		p.id = got.PaymentID
	}
	l.mu.Lock()
	l.paid[p.amount] = p
	l.mu.Unlock()
	return p
}

// run offers n payments at failoverRate, at most 16 at once; at(sent) runs
// in the pacing loop after each payment is sent off (nil: nothing).
func (l *failoverLoad) run(ctx context.Context, n int, at func(sent int) error) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	tick := time.NewTicker(time.Second / failoverRate)
	defer tick.Stop()
	for sent := 1; sent <= n; sent++ {
		select {
		case <-ctx.Done():
			l.fail(ctx.Err())
			wg.Wait()
			return
		case <-tick.C:
		}
		sem <- struct{}{}
		l.mu.Lock()
		i := l.next
		l.next++
		l.mu.Unlock()
		wg.Go(func() {
			defer func() { <-sem }()
			l.pay(ctx, i, false)
		})
		if at != nil {
			if err := at(sent); err != nil {
				l.fail(err)
				break
			}
		}
	}
	wg.Wait()
}

func (l *failoverLoad) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first == nil {
		l.first = err
	}
}

// untilFirstOn sends payments one at a time until one is tried first on
// the channel alias (its account read by serve), at most for d.
func (l *failoverLoad) untilFirstOn(ctx context.Context, alias string, d time.Duration) (time.Duration, error) {
	start := time.Now()
	for time.Since(start) < d {
		l.mu.Lock()
		i := l.next
		l.next++
		l.mu.Unlock()
		p := l.pay(ctx, i, false)
		if p.id == "" {
			return 0, fmt.Errorf("probe payment: %s", p.answer)
		}
		var list openapi.PaymentAttemptList
		if err := l.pg.client.JSON(ctx, "GET", "/api/v1/payments/"+p.id+"/attempts", nil, &list); err != nil {
			return 0, err
		}
		if len(list.Items) > 0 && list.Items[0].Channel == alias {
			return time.Since(start), nil
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil { // a poll's interval
			return 0, err
		}
	}
	return 0, fmt.Errorf("no payment routed to %s within %s", alias, d)
}

// followHeld sends the follow-up of every accepted authorize-only payment
// that is authorized now and has none yet: a cancel to those chosen to be
// canceled, a capture to the others; with alias, only to those held on
// that channel. It returns those it captured and those it canceled.
func (l *failoverLoad) followHeld(ctx context.Context, alias string) (captured, canceled []*failoverPayment, err error) {
	l.mu.Lock()
	var cands []*failoverPayment
	for _, p := range l.paid {
		if p.authorize && p.id != "" && !p.captured && !p.canceled {
			cands = append(cands, p)
		}
	}
	l.mu.Unlock()
	for _, p := range cands {
		var got openapi.Payment
		if err := l.pg.client.JSON(ctx, "GET", "/api/v1/payments/"+p.id, nil, &got); err != nil {
			return captured, canceled, err
		}
		if got.Status != "authorized" {
			continue
		}
		if alias != "" {
			var list openapi.PaymentAttemptList
			if err := l.pg.client.JSON(ctx, "GET", "/api/v1/payments/"+p.id+"/attempts", nil, &list); err != nil {
				return captured, canceled, err
			}
			if len(list.Items) == 0 || list.Items[len(list.Items)-1].Channel != alias {
				continue
			}
		}
		verb := "capture"
		if p.cancel {
			verb = "cancel"
		}
		if err := l.pg.client.JSON(ctx, "POST", "/api/v1/payments/"+p.id+"/"+verb, nil, &got); err != nil {
			return captured, canceled, fmt.Errorf("%s %s: %w", verb, p.id, err)
		}
		l.mu.Lock()
		if p.cancel {
			p.canceled = true
			canceled = append(canceled, p)
		} else {
			p.captured = true
			captured = append(captured, p)
		}
		l.mu.Unlock()
	}
	return captured, canceled, nil
}

// waiting reports whether p is a hold that waits for its follow-up (a
// capture or cancel not sent yet): settled for now.
func (p *failoverPayment) waiting() bool {
	return p.final.Status == "authorized" && !p.captured && !p.canceled
}

// settle waits until the accepted payments from index from on are all
// final or authorized (a hold waits for its capture or cancel), at most for d; it
// returns how many are not. With trickle, a shop's traffic goes on
// meanwhile: a payment each poll (they count in the phase), so that a
// circuit past its cooldown is probed by a payment, as it would be in
// production, not only by the retries of captures.
func (l *failoverLoad) settle(ctx context.Context, from int64, d time.Duration, trickle bool) (int, error) {
	deadline := time.Now().Add(d)
	for {
		if trickle {
			l.mu.Lock()
			i := l.next
			l.next++
			l.mu.Unlock()
			l.pay(ctx, i, true) // nobody would capture it
		}
		l.mu.Lock()
		to := l.next
		l.mu.Unlock()
		left := 0
		for i := from; i < to; i++ {
			l.mu.Lock()
			p := l.paid[failoverBaseAmount+i]
			l.mu.Unlock()
			if p == nil || p.id == "" || p.final.Final || p.waiting() {
				continue
			}
			if err := l.pg.client.JSON(ctx, "GET", "/api/v1/payments/"+p.id, nil, &p.final); err != nil {
				return 0, err
			}
			if p.final.Final {
				p.finalAt = time.Now()
			}
			if !p.final.Final && !p.waiting() {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return left, nil
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil { // a poll's interval
			return left, err
		}
	}
}

// failoverPhase is what one phase's payments came to, from Paygate's side.
type failoverPhase struct {
	offered, accepted int
	notAccepted       map[string]int
	statuses          map[string]int
	rerouted          map[string]int // by reason
	lastOn            map[string]int // by the channel of the last attempt
	skipped           int            // one attempt, not on A: A's circuit was open
	slowest           time.Duration  // the longest a charge took to be final, seen by polls
	err               error
}

// summarize reads the attempts of the payments of indexes [from, to).
func (l *failoverLoad) summarize(ctx context.Context, from, to int64) failoverPhase {
	s := failoverPhase{notAccepted: map[string]int{}, statuses: map[string]int{}, rerouted: map[string]int{},
		lastOn: map[string]int{}}
	for i := from; i < to; i++ {
		l.mu.Lock()
		p := l.paid[failoverBaseAmount+i]
		l.mu.Unlock()
		if p == nil {
			continue
		}
		s.offered++
		if p.id == "" {
			s.notAccepted[p.answer]++
			continue
		}
		s.accepted++
		status := p.final.Status
		if p.final.Decline != nil {
			status += " (" + p.final.Decline.Code + ")"
		}
		s.statuses[status]++
		if !p.finalAt.IsZero() && !p.authorize {
			s.slowest = max(s.slowest, p.finalAt.Sub(p.sent))
		}
		var list openapi.PaymentAttemptList
		if err := l.pg.client.JSON(ctx, "GET", "/api/v1/payments/"+p.id+"/attempts", nil, &list); err != nil {
			s.err = err
			return s
		}
		p.attempts = list.Items
		for _, at := range list.Items {
			if at.Reason != "" {
				s.rerouted[at.Reason]++
			}
		}
		if len(list.Items) > 0 {
			s.lastOn[list.Items[len(list.Items)-1].Channel]++
		}
		if len(list.Items) == 1 && list.Items[0].Channel != failoverAlias {
			s.skipped++
		}
	}
	return s
}

// strayMoves counts the payments of indexes [from, to) that moved for a
// reason not in allowed, or after a reroutable decline without the card
// that gives it (summarize read their attempts), with a few examples.
func (l *failoverLoad) strayMoves(from, to int64, allowed []string) (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, examples := 0, []string(nil)
	for i := from; i < to; i++ {
		p := l.paid[failoverBaseAmount+i]
		if p == nil {
			continue
		}
		for _, at := range p.attempts {
			if at.Reason == "" || slices.Contains(allowed, at.Reason) && (at.Reason != "soft_decline" || p.declining) {
				continue
			}
			n++
			if len(examples) < 5 {
				examples = append(examples, fmt.Sprintf("payment %s moved from %s (%s)", p.id, at.Channel, at.Reason))
			}
			break
		}
	}
	return n, examples
}
