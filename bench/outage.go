package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
)

// Simulated times of the outage (docs/design/decisions.md section 6: the
// retry schedule runs 3 days, so a day's outage must lose nothing).
const (
	outageMidday = 12 * time.Hour // the second half of the payments happens then
	outageEnd    = 24 * time.Hour // the receiver comes back
	outageGiveUp = 80 * time.Hour // past the 72 h retry window: nothing can still arrive
)

// webhookOutage: a receiver is down (503) for a simulated day while
// payments happen, half at its start and half at midday; Paygate's clock
// is moved through the day (PAYGATE_CLOCK_FILE) in steps, each stopping at
// the next retries the API announces, so that every attempt of the
// schedule is really made and refused. Then the receiver comes back and
// the clock moves on until no delivery is pending. Every payment.* event
// the API lists must have arrived, correctly signed: exactly the set of
// event ids, duplicates allowed but counted.
func webhookOutage(ctx context.Context, c checkConfig) (checkResult, error) {
	n := c.n
	if n == 0 {
		n = 200
	}
	res := checkResult{name: "webhook-outage", pass: true}
	clk := &outageClock{path: filepath.Join(c.dir, "clock-"+uuid.NewString()[:8])}
	if err := clk.set(0); err != nil {
		return res, err
	}
	pg, err := startChecked(ctx, c, "outage", paygateSpec{env: []string{"PAYGATE_CLOCK_FILE=" + clk.path}})
	if err != nil {
		return res, err
	}
	defer pg.close()
	pg.client.Now = clk.now
	rcv, ep, err := registerHookReceiver(ctx, pg.client, clk)
	if err != nil {
		return res, err
	}
	defer rcv.close()
	started := time.Now()
	o := &outage{ctx: ctx, pg: pg, clk: clk, endpoint: ep.ID, log: c.log, states: map[string]deliveryState{}, stepAt: started}

	rcv.setDown(true)
	fmt.Fprintf(c.log, "webhook-outage: receiver down; %d payments on %s\n", n, c.db)
	// From 20 payments on, half of them are made at midday, so that two
	// rounds of retries run out of step.
	first := n
	if n >= 20 {
		first = n / 2
	}
	if err := o.pay(0, first); err != nil {
		return res, err
	}
	if first < n {
		if err := o.advanceTo(outageMidday); err != nil {
			return res, err
		}
		if err := o.setClock(outageMidday); err != nil {
			return res, err
		}
		if err := o.pay(first, n); err != nil {
			return res, err
		}
	}
	if err := o.advanceTo(outageEnd); err != nil {
		return res, err
	}
	if err := o.setClock(outageEnd); err != nil {
		return res, err
	}
	refused := rcv.counts().refused
	rcv.setDown(false)
	fmt.Fprintf(c.log, "webhook-outage: receiver up at +%s after %d refused attempts\n", outageEnd, refused)
	if err := o.drain(); err != nil {
		return res, err
	}
	wall := time.Since(started)

	events, err := readAllPages[openapi.Event](ctx, pg.client, "/api/v1/events")
	if err != nil {
		return res, err
	}
	got := rcv.counts()
	var recorded, lost, phantom []string
	listed := map[string]bool{}
	for _, e := range events {
		if strings.HasPrefix(e.Type, "payment.") {
			listed[e.ID] = true
			recorded = append(recorded, e.ID)
			if got.delivered[e.ID] == 0 {
				lost = append(lost, e.ID+" ("+e.Type+")")
			}
		}
	}
	duplicates := 0
	for id, k := range got.delivered {
		duplicates += k - 1
		if !listed[id] {
			phantom = append(phantom, id)
		}
	}
	sort.Strings(lost)
	byStatus := map[string]int{}
	for _, id := range recorded {
		byStatus[o.states[id].status]++
	}
	if first < n {
		res.add("payments", "%d on %s (%d at the outage's start, %d at +%s)", n, c.db, first, n-first, outageMidday)
	} else {
		res.add("payments", "%d on %s, at the outage's start", n, c.db)
	}
	res.add("events recorded", "%d payment.* events", len(recorded))
	res.add("outage", "receiver answered 503 to %d attempts over a simulated %s", refused, outageEnd)
	res.add("delivered", "%d distinct events, %d duplicates", len(got.delivered), duplicates)
	res.add("lost", "%d", len(lost))
	res.add("deliveries", "%s", tallyText(byStatus))
	res.add("signatures", "%d bad, %d timestamps off the simulated clock", got.badSignature, got.offClock)
	res.add("simulated time", "+%s in %d clock steps", o.offset.Round(time.Minute), o.steps)
	res.add("wall time", "%s", wall.Round(time.Millisecond))
	if len(recorded) < n {
		res.fail("%d events recorded for %d payments", len(recorded), n)
	}
	if len(lost) > 0 {
		res.fail("events never delivered: %s", someOf(lost))
	}
	if len(phantom) > 0 {
		res.fail("delivered events the API does not list: %s", someOf(phantom))
	}
	if refused < len(recorded) {
		res.fail("only %d attempts met the outage", refused)
	}
	if got.badSignature > 0 || got.offClock > 0 {
		res.fail("%d deliveries did not verify, %d were stamped off the clock", got.badSignature, got.offClock)
	}
	return res, nil
}

// outage drives one run: payments, the clock, and what the API says of
// each event's delivery to the receiver's endpoint.
type outage struct {
	ctx      context.Context
	pg       *checkedPaygate
	clk      *outageClock
	endpoint string
	log      io.Writer

	events []string                 // the ids of every event so far
	states map[string]deliveryState // by event id, as last read
	offset time.Duration
	steps  int
	stepAt time.Time // when the clock last moved
}

// deliveryState is an event's delivery to the endpoint, as the API shows it.
type deliveryState struct {
	status   string // pending, succeeded, failed; "none" before the fan-out made one
	attempts int
	last     time.Time // the last attempt's
	next     time.Time
}

// due reports whether the delivery must still make an attempt by now.
func (d deliveryState) due(now time.Time) bool {
	return d.status == "none" || d.status == "pending" && !d.next.After(now)
}

// pay creates the payments from..to-1, waits until they are final, and
// learns their events.
func (o *outage) pay(from, to int) error {
	for i := from; i < to; i++ {
		number := "4242424242424242"
		if i%3 == 2 {
			number = "4000000000000002"
		}
		body := directCard(fmt.Sprintf("outage-%d", i), int64(500+i), number, "123")
		if err := o.pg.client.JSON(o.ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), nil); err != nil {
			return fmt.Errorf("create payment %d: %w", i, err)
		}
	}
	if left, err := waitAllFinal(o.ctx, o.pg.client, 2*time.Minute); err != nil {
		return err
	} else if left > 0 {
		return fmt.Errorf("%d payments not final after 2 minutes", left)
	}
	events, err := readAllPages[openapi.Event](o.ctx, o.pg.client, "/api/v1/events")
	if err != nil {
		return err
	}
	o.events = o.events[:0]
	for _, e := range events {
		o.events = append(o.events, e.ID)
	}
	return nil
}

// advanceTo moves the clock towards until in steps, each to the next
// retries the API announces, waiting at every stop until each due attempt
// has been made. A stop may come after several deliveries' next attempts,
// but never later than a quarter of any one's wait beyond it: one stop
// takes a whole round of retries (their jitter is ±10 %), and every
// attempt happens close to its schedule.
func (o *outage) advanceTo(until time.Duration) error {
	for {
		pending, err := o.settle()
		if err != nil {
			return err
		}
		var stop time.Time
		for _, d := range pending {
			if late := d.next.Add(d.next.Sub(d.last) / 4); stop.IsZero() || late.Before(stop) {
				stop = late
			}
		}
		now := o.clk.now()
		if stop.IsZero() || stop.Sub(now) > until-o.offset {
			return nil
		}
		if err := o.setClock(o.offset + stop.Sub(now) + time.Second); err != nil {
			return err
		}
	}
}

// drain moves the clock, once the receiver is back, to the last announced
// retry at each stop, until no delivery is pending.
func (o *outage) drain() error {
	for {
		pending, err := o.settle()
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			return nil
		}
		latest := o.clk.now()
		for _, d := range pending {
			if d.next.After(latest) {
				latest = d.next
			}
		}
		target := o.offset + latest.Sub(o.clk.now()) + time.Second
		if target > outageGiveUp {
			return fmt.Errorf("%d deliveries still pending at +%s", len(pending), o.offset)
		}
		if err := o.setClock(target); err != nil {
			return err
		}
	}
}

// settle polls the events' deliveries until none is due at the current
// clock, and returns the pending ones (all due later).
func (o *outage) settle() ([]deliveryState, error) {
	deadline := time.Now().Add(2 * time.Minute)
	check := make([]string, 0, len(o.events))
	for _, id := range o.events {
		if st, ok := o.states[id]; !ok || st.status == "pending" || st.status == "none" {
			check = append(check, id)
		}
	}
	for {
		now := o.clk.now()
		var due []string
		for _, id := range check {
			st, err := o.delivery(id)
			if err != nil {
				return nil, err
			}
			o.states[id] = st
			if st.due(now) {
				due = append(due, id)
			}
		}
		if len(due) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("at +%s, %d deliveries still due after 2 minutes (e.g. event %s)", o.offset, len(due), due[0])
		}
		check = due
		if err := sleepCtx(o.ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
	var pending []deliveryState
	for _, id := range o.events {
		if st := o.states[id]; st.status == "pending" {
			pending = append(pending, st)
		}
	}
	return pending, nil
}

// delivery reads an event's delivery to the endpoint.
func (o *outage) delivery(eventID string) (deliveryState, error) {
	var ev openapi.EventDetails
	if err := o.pg.client.JSON(o.ctx, "GET", "/api/v1/events/"+eventID, nil, &ev); err != nil {
		return deliveryState{}, fmt.Errorf("GET event %s: %w", eventID, err)
	}
	for _, d := range ev.Deliveries {
		if d.EndpointID == o.endpoint {
			st := deliveryState{status: d.Status, attempts: len(d.Attempts), next: d.NextAttemptAt.Std()}
			if len(d.Attempts) > 0 {
				st.last = d.Attempts[len(d.Attempts)-1].AttemptedAt.Std()
			}
			return st, nil
		}
	}
	return deliveryState{status: "none"}, nil
}

// setClock moves Paygate's clock to offset and waits until the server
// has taken it up: a request signed at the new time is accepted only
// then, when the step exceeds the ±300 s signing window.
func (o *outage) setClock(offset time.Duration) error {
	if offset <= o.offset {
		return nil
	}
	if err := o.clk.set(offset); err != nil {
		return err
	}
	fmt.Fprintf(o.log, "webhook-outage: clock +%s (%s since the last step)\n", offset.Round(time.Second), time.Since(o.stepAt).Round(time.Millisecond))
	o.offset = offset
	o.steps++
	o.stepAt = time.Now()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := o.pg.client.JSON(o.ctx, "GET", "/api/v1/payment-channels", nil, nil)
		var apiErr *client.Error
		switch {
		case err == nil:
			return nil
		case !errors.As(err, &apiErr) || apiErr.Code != "timestamp_out_of_range":
			return err
		case time.Now().After(deadline):
			return fmt.Errorf("paygate did not take the clock +%s up within 10 s", offset)
		}
		if err := sleepCtx(o.ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// outageClock is the bench's side of PAYGATE_CLOCK_FILE: it writes the
// offset, and its now is the time Paygate runs at (the client signs with
// it, the receiver judges timestamps by it).
type outageClock struct {
	path   string
	offset atomic.Int64 // nanoseconds
}

func (k *outageClock) set(off time.Duration) error {
	tmp := k.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(off.String()+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, k.path); err != nil {
		return err
	}
	k.offset.Store(int64(off))
	return nil
}

func (k *outageClock) now() time.Time { return time.Now().Add(time.Duration(k.offset.Load())) }

func tallyText(m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
