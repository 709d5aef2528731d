package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
)

// verify matches both acquirers' records to the payments by amount
// (docs/reliability.md, Failover, "What it proves").
func (l *failoverLoad) verify(res checkResult, ra, rb acqRecord, phases ...failoverPhase) (checkResult, error) {
	for i, s := range phases {
		if s.err != nil {
			return res, s.err
		}
		res.add(fmt.Sprintf("phase %d: payments", i+1), "%d offered, %d accepted (%s); final: %s; the slowest charge final %s after it was sent",
			s.offered, s.accepted, noneIfEmpty(tallyText(s.notAccepted)), tallyText(s.statuses), s.slowest.Round(100*time.Millisecond))
		res.add(fmt.Sprintf("phase %d: reroutes", i+1), "%s; %d sent straight to B (A's circuit open); last attempt on %s",
			noneIfEmpty(tallyText(s.rerouted)), s.skipped, tallyText(s.lastOn))
	}
	t := failoverTally{records: map[string]acqRecord{"A": ra, "B": rb}, captured: map[string]int{}, canceled: map[string]int{}}
	l.mu.Lock()
	for _, p := range l.paid {
		t.check(p)
	}
	l.mu.Unlock()
	res.add("records", "A %d entries, B %d entries; payments with entries on both: %d", ra.entries, rb.entries, t.both)
	res.add("captures", "%d held on A captured on A (%d of them while A was down), %d held on B captured on B, misplaced %d",
		t.captured["A"], t.capturedDown, t.captured["B"], t.misplaced)
	res.add("cancels", "%d held on A released on A (%d of them canceled while A was down), %d held on B released on B, misplaced %d",
		t.canceled["A"], t.canceledDown, t.canceled["B"], t.miscanceled)
	res.add("saved cards", "%d payments saved their card: %d succeeded with it saved (%d of them on A, the card kept for its payer in A's records), %d declined or failed; not saved %d; payers with two customer records %d",
		t.saves, t.saved, t.savedSeen, t.saveFailed, t.unsaved, ra.payersTwice+rb.payersTwice)
	res.add("charged twice", "%d (across both acquirers)", t.twice)
	res.add("lost", "%d (accepted, not final)", t.lost)
	res.add("mismatches", "%d (status and records disagreeing)", t.mismatch)
	if t.twice+t.lost+t.mismatch+t.misplaced+t.miscanceled+t.unsaved+ra.payersTwice+rb.payersTwice > 0 {
		res.fail("charged twice %d, lost %d, mismatches %d, misplaced captures %d, misplaced cancels %d, cards not saved %d, payers with two customer records %d: %s",
			t.twice, t.lost, t.mismatch, t.misplaced, t.miscanceled, t.unsaved, ra.payersTwice+rb.payersTwice, strings.Join(t.examples, "; "))
	}
	if len(phases[0].rerouted) == 0 {
		res.fail("phase 1: no payment was rerouted: the kill proved nothing")
	}
	if t.captured["A"] == 0 {
		res.fail("no hold on A was captured: stickiness not shown")
	}
	if t.canceledDown == 0 {
		res.fail("no hold on A was canceled while A was down")
	}
	return res, nil
}

// failoverTally is what verify counts, payment by payment.
type failoverTally struct {
	records map[string]acqRecord // "A", "B"

	twice, lost, mismatch, both int
	captured, canceled          map[string]int // by the acquirer that held the payment
	capturedDown, canceledDown  int            // of A's, those sent while A was down
	misplaced, miscanceled      int
	saves, saved, savedSeen     int // saving payments; succeeded with the card saved; of them, seen in the records
	saveFailed, unsaved         int
	examples                    []string
}

func (t *failoverTally) note(counter *int, format string, args ...any) {
	*counter++
	if len(t.examples) < 5 {
		t.examples = append(t.examples, fmt.Sprintf(format, args...))
	}
}

// entries says what the records of on show for amount.
func (t *failoverTally) entries(on string, amount int64) string {
	var out []string
	for _, kind := range []string{acquirer.EntryCharge, acquirer.EntryHold, acquirer.EntryCapture, acquirer.EntryRelease} {
		if n := t.records[on].moves[kind][amount]; n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, kind))
		}
	}
	return noneIfEmpty(strings.Join(out, ", "))
}

// check holds one payment against both acquirers' records.
func (t *failoverTally) check(p *failoverPayment) {
	amount := p.amount
	count := func(on, kind string) int { return t.records[on].moves[kind][amount] }
	moves := func(on string) int { return count(on, acquirer.EntryCharge) + count(on, acquirer.EntryHold) }
	ma, mb := moves("A"), moves("B")
	if ma+mb > 1 {
		t.note(&t.twice, "payment of %d (%s): money moved %d times on A, %d on B", amount, p.id, ma, mb)
	}
	if ma > 0 && mb > 0 {
		t.both++
	}
	if p.id == "" {
		if ma+mb > 0 {
			t.note(&t.mismatch, "a payment of %d not accepted (%s) moved money", amount, p.answer)
		}
		return
	}
	if !p.final.Final {
		t.note(&t.lost, "payment %s of %d: %s, not final (A: %s; B: %s)", p.id, amount, p.final.Status,
			t.entries("A", amount), t.entries("B", amount))
		return
	}
	on, other := "A", "B"
	if mb > 0 {
		on, other = "B", "A"
	}
	// follow-ups: captures and releases where the payment is held, and
	// on the other acquirer.
	capHere, capThere := count(on, acquirer.EntryCapture), count(other, acquirer.EntryCapture)
	relHere, relThere := count(on, acquirer.EntryRelease), count(other, acquirer.EntryRelease)
	status := p.final.Status
	switch {
	case p.canceled:
		if status != "canceled" || ma+mb != 1 || count(on, acquirer.EntryHold) != 1 || relHere != 1 ||
			capHere+capThere+relThere != 0 || p.whileDown && on != "A" {
			t.note(&t.miscanceled, "payment %s canceled, now %s, held on %s: %d holds, %d releases, %d captures there; %d releases, %d captures on %s",
				p.id, status, on, count(on, acquirer.EntryHold), relHere, capHere, relThere, capThere, other)
			return
		}
		t.canceled[on]++
		if p.whileDown {
			t.canceledDown++
		}
	case status == "canceled":
		t.note(&t.mismatch, "payment %s canceled, though no cancel was sent", p.id)
	case status == "succeeded":
		if ma+mb != 1 {
			t.note(&t.mismatch, "payment %s succeeded, %d money movements", p.id, ma+mb)
		}
		if !p.authorize {
			if capHere+capThere+relHere+relThere > 0 {
				t.note(&t.mismatch, "payment %s, a charge, with %d captures and %d releases", p.id, capHere+capThere, relHere+relThere)
			}
			break
		}
		if capHere != 1 || capThere != 0 || relHere+relThere != 0 || p.whileDown && on != "A" {
			t.note(&t.misplaced, "payment %s held on %s: %d captures and %d releases there, %d captures and %d releases on %s",
				p.id, on, capHere, relHere, capThere, relThere, other)
			break
		}
		t.captured[on]++
		if p.whileDown {
			t.capturedDown++
		}
	default:
		if c := count("A", acquirer.EntryCharge) + count("B", acquirer.EntryCharge); c > 0 {
			t.note(&t.mismatch, "payment %s %s with %d charges", p.id, status, c)
		}
		if h := count("A", acquirer.EntryHold) + count("B", acquirer.EntryHold); h > relHere+relThere {
			t.note(&t.mismatch, "payment %s %s with a hold not released", p.id, status)
		}
	}
	if p.save {
		t.checkSaved(p, on)
	}
}

// checkSaved holds a payment that saved its card: succeeded with the card
// saved (Paygate's saved card, and the acquirer's records where they
// tell), or declined or failed (nothing charged: check saw to that).
func (t *failoverTally) checkSaved(p *failoverPayment, on string) {
	t.saves++
	switch p.final.Status {
	case "succeeded":
		seen, told := t.records[on].saved[p.amount]
		if p.final.SavedCardID == "" || t.records[on].saved != nil && !seen {
			t.note(&t.unsaved, "payment %s succeeded on %s: saved card %q, kept in the records %t (told %t)",
				p.id, on, p.final.SavedCardID, seen, told)
			return
		}
		t.saved++
		if t.records[on].saved != nil {
			t.savedSeen++
		}
	case "declined", "failed":
		t.saveFailed++
	default:
		t.note(&t.unsaved, "payment %s saving its card ended %s", p.id, p.final.Status)
	}
}
