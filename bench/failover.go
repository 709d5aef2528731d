package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
)

// Failover sizes and bounds.
const (
	failoverRate    = 40               // payments offered per second
	failoverSettle  = 2 * time.Minute  // the bounded wait for every payment to be final
	failoverReach   = 30 * time.Second // the bounded wait for serve to route to a new account
	failoverAlias   = "acq-a-card"     // acquirer A's channel; B is the built-in sandbox channel
	failoverTimeout = "1s"             // serve --provider-timeout
)

// failoverFaults is the fault mix of acquirer A in the second phase.
var failoverFaults = []string{"--fault-seed", "7", "--fault-timeout-rate", "0.1", "--fault-unreadable-rate", "0.05",
	"--fault-503-rate", "0.1"}

// failover proves routing and failover under faults
// (docs/design/decisions.md section 17) with two standalone sandbox
// acquirers, A and B, each a `paygate sandbox-acquirer` process with a
// state file: A is killed with SIGKILL and restarted on its port and
// state file (see runFailover).
func failover(ctx context.Context, c checkConfig) (checkResult, error) {
	newA := func(bin, key, keyFile string) failoverAcquirer {
		return &acqProcess{name: "A", bin: bin, key: key, keyFile: keyFile, state: filepath.Join(c.dir, "acquirer-a.json")}
	}
	return runFailover(ctx, c, "failover", newA, "")
}

// failoverAcquirer is acquirer A of a failover check: it goes down and
// comes back on its address with its records, and takes a fault mix.
type failoverAcquirer interface {
	// up starts it, on the address it had if it had one; faulty: with
	// the fault mix of phase 2.
	up(ctx context.Context, faulty bool) error
	// down takes it away: its address refuses connections, its records
	// stay.
	down()
	// account is the flags of `providers add` for an account on it; it
	// may write files under dir.
	account(dir string) ([]string, error)
	// describe says what it is; faults its fault mix, and the kinds of
	// request on which the mix met no fault (it proved nothing there).
	describe() string
	faults() (mix string, unmet []string)
	// moves are the reasons (an attempt's reason) for which a payment of
	// phase 2 may move to B: what A's fault mix and cards can give.
	moves() []string
	// record reads what it did from its own records.
	record(ctx context.Context) (acqRecord, error)
}

// book counts an acquirer's money movements by kind (acquirer.EntryCharge
// and its siblings) and amount.
type book map[string]map[int64]int

// acqRecord is what an acquirer did, from its own records.
type acqRecord struct {
	entries int
	moves   book
	landed  map[int64]time.Time // when each amount's first capture or release landed, where known
	// saved says, for each charge that asked to save its card, whether
	// the records show the card kept for its payer; nil: they do not tell.
	saved map[int64]bool
	// payersTwice counts the payers the acquirer keeps more than one
	// customer record for.
	payersTwice int
}

func (r *acqRecord) add(kind string, amount int64, at time.Time) {
	if r.moves == nil {
		r.moves, r.landed = book{}, map[int64]time.Time{}
	}
	r.entries++
	if r.moves[kind] == nil {
		r.moves[kind] = map[int64]int{}
	}
	r.moves[kind][amount]++
	landing := kind == acquirer.EntryCapture || kind == acquirer.EntryRelease
	if t, ok := r.landed[amount]; landing && !at.IsZero() && (!ok || at.Before(t)) {
		r.landed[amount] = at
	}
}

// runFailover is the failover check with acquirer A from newA (given the
// paygate binary and the sandbox key B takes) and B a standalone sandbox
// acquirer, which serve's --sandbox-url points at: the key has a channel
// on A at position 1 and the built-in sandbox channel at position 2.
// Phase 1: a bounded load of direct card payments (a third authorize
// only); A goes down a third of the way in, payments go on through B, and
// A comes back on its address with its records two thirds of the way in;
// the payments held on A at the kill are captured or canceled (every
// fourth hold) while it is down, the rest once the others are final; a
// payment goes every poll meanwhile, as a shop's traffic would. Phase 2:
// A with its fault mix and another load, every hold captured or canceled,
// every seventh payment saving its card; with declines, every tenth
// payment has that card, which A declines with a decline it marks
// reroutable. Then both acquirers' records must show: no payment moving
// money twice across both, every accepted payment final with the
// records' outcome, every capture and every cancel on the acquirer that
// holds its payment, and the cards saved; and no payment of phase 2 may
// have moved for a reason A's mix cannot give. It also measures how long
// after A is back the captures and cancels sent while it was down land.
func runFailover(ctx context.Context, c checkConfig, name string, newA func(bin, key, keyFile string) failoverAcquirer,
	declines string) (checkResult, error) {
	res := checkResult{name: name, pass: true}
	began := time.Now()
	n := cmp.Or(c.n, 1200)
	bin, err := paygateBinary(ctx)
	if err != nil {
		return res, err
	}
	key := "sk_sandbox_failover_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	keyFile := filepath.Join(c.dir, "acquirer.key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		return res, err
	}
	a := newA(bin, key, keyFile)
	b := &acqProcess{name: "B", bin: bin, key: key, keyFile: keyFile, state: filepath.Join(c.dir, "acquirer-b.json")}
	if err := a.up(ctx, false); err != nil {
		return res, err
	}
	defer a.down()
	if err := b.start(ctx, nil); err != nil {
		return res, err
	}
	defer b.kill()
	serveArgs := []string{"--sandbox-url", b.url(), "--sandbox-key", key, "--provider-timeout", failoverTimeout, "--job-timeout", "10s"}
	cooldown := "30s (the default)"
	if c.cooldown > 0 {
		serveArgs = append(serveArgs, "--circuit-cooldown", c.cooldown.String())
		cooldown = c.cooldown.String()
	}
	pg, err := startChecked(ctx, c, name, paygateSpec{args: serveArgs})
	if err != nil {
		return res, err
	}
	defer pg.close()
	pg.client.Retries = 5
	account, err := a.account(c.dir)
	if err != nil {
		return res, err
	}
	for _, args := range [][]string{
		append([]string{"providers", "add", "--name", "acq-a"}, account...),
		{"channels", "create", "--alias", failoverAlias, "--provider", "acq-a", "--methods", "card", "--currencies", "USD"},
		{"channels", "assign", "--key", pg.access, "--channel", failoverAlias, "--position", "1"},
		{"channels", "assign", "--key", pg.access, "--channel", "sandbox", "--position", "2"},
	} {
		if err := runCLI(ctx, pg.spec, args...); err != nil {
			return res, err
		}
	}
	fmt.Fprintf(c.log, "%s: %d payments on %s; A: %s, B %s\n", name, n, c.db, a.describe(), b.url())
	l := &failoverLoad{pg: pg, paid: map[int64]*failoverPayment{}}
	loadBegan := time.Now()

	// serve reads provider accounts every 2 s: the first payment tried on
	// A says it routes there.
	reachedIn, err := l.untilFirstOn(ctx, failoverAlias, failoverReach)
	if err != nil {
		return res, err
	}
	res.add("processes", "serve (%s, 1 process; --sandbox-url B, --provider-timeout %s); A: %s; B: a sandbox acquirer (its own process and state file)",
		c.db, failoverTimeout, a.describe())
	res.add("routing", "key: %s at position 1 (account acq-a → A), sandbox at position 2 (→ B); serve routed to A %s after `providers add`",
		failoverAlias, reachedIn.Round(time.Millisecond))

	// Phase 1: A down a third of the way in, back two thirds in.
	var (
		killedAt, backAt       time.Time
		heldDown, canceledDown []*failoverPayment // captured, canceled while A was down
	)
	first := int64(0) // the probes count too
	l.run(ctx, n, func(sent int) error {
		switch sent {
		case n / 3:
			a.down()
			killedAt = time.Now()
			fmt.Fprintf(c.log, "%s: A down after %d payments\n", name, sent)
		case n/3 + n/12:
			// Some payments met A down; now the holds on A so far are
			// captured or canceled while it is down: their follow-ups
			// must wait for it, then land there.
			var err error
			heldDown, canceledDown, err = l.followHeld(ctx, failoverAlias)
			l.mu.Lock()
			for _, p := range append(slices.Clone(heldDown), canceledDown...) {
				p.whileDown = true
			}
			l.mu.Unlock()
			return err
		case 2 * n / 3:
			if err := a.up(ctx, false); err != nil {
				return err
			}
			backAt = time.Now()
			fmt.Fprintf(c.log, "%s: A back after %d payments, %s down\n", name, sent, backAt.Sub(killedAt).Round(time.Millisecond))
		}
		return nil
	})
	if err := l.err(); err != nil {
		return res, err
	}
	loadTook := time.Since(loadBegan)
	// A shop's traffic goes on while the payments settle: a payment that
	// arrives once the circuit's cooldown is over probes A, as it would in
	// production (without it the probe waits for the next retry of a
	// follow-up, up to 30 s).
	if _, err := l.settle(ctx, first, failoverSettle, true); err != nil {
		return res, err
	}
	later, canceledLater, err := l.followHeld(ctx, "")
	if err != nil {
		return res, err
	}
	left, err := l.settle(ctx, first, failoverSettle, true)
	if err != nil {
		return res, err
	}
	phase1Settled := time.Since(backAt)
	p1 := l.summarize(ctx, first, l.next)
	second := l.next
	res.add("phase 1: down", "%d payments offered at %d/s in %s; A down after %d, back (same address, same records) after %d, down %s",
		n, failoverRate, loadTook.Round(time.Millisecond), n/3, 2*n/3, backAt.Sub(killedAt).Round(time.Millisecond))
	res.add("phase 1: follow-ups", "%d holds on A captured and %d canceled while A was down; %d holds captured and %d canceled after; all final %s after A was back",
		len(heldDown), len(canceledDown), len(later), len(canceledLater), phase1Settled.Round(time.Millisecond))
	if left > 0 {
		res.fail("phase 1: %d payments not final %s after A came back", left, failoverSettle)
	}

	// Phase 2: A with a fault mix.
	a.down()
	if err := a.up(ctx, true); err != nil {
		return res, err
	}
	l.mu.Lock()
	l.declines, l.saves = declines, true
	l.mu.Unlock()
	n2 := max(n/2, 1)
	p2began := time.Now()
	l.run(ctx, n2, nil)
	if err := l.err(); err != nil {
		return res, err
	}
	if _, err := l.settle(ctx, second, failoverSettle, false); err != nil {
		return res, err
	}
	captures2, cancels2, err := l.followHeld(ctx, "")
	if err != nil {
		return res, err
	}
	left2, err := l.settle(ctx, second, failoverSettle, false)
	if err != nil {
		return res, err
	}
	p2 := l.summarize(ctx, second, l.next)
	mix, unmet := a.faults()
	if declines != "" {
		mix += fmt.Sprintf("; every tenth payment with card %s (A declines it, reroutable)", declines)
	}
	res.add("phase 2: faults", "%d payments at %d/s with A at %s; every seventh payment saves its card; %d holds captured, %d canceled; all final in %s",
		n2, failoverRate, mix, len(captures2), len(cancels2), time.Since(p2began).Round(time.Millisecond))
	if left2 > 0 {
		res.fail("phase 2: %d payments not final %s after the load", left2, failoverSettle)
	}
	if declines != "" && p2.rerouted["soft_decline"] == 0 {
		res.fail("phase 2: no payment was moved after A's reroutable decline")
	}
	if len(unmet) > 0 {
		res.fail("phase 2: A's fault mix met no fault on %s: it proved nothing there", strings.Join(unmet, ", "))
	}
	if len(cancels2) == 0 {
		res.fail("phase 2: no hold was canceled under the fault mix")
	}
	stray, strays := l.strayMoves(second, l.next, a.moves())
	res.add("phase 2: moves", "payments moved for a reason A's mix cannot give (%s allowed; a reroutable decline only on its card): %d",
		strings.Join(a.moves(), ", "), stray)
	if stray > 0 {
		res.fail("phase 2: %d payments moved for a reason A's mix cannot give: %s", stray, strings.Join(strays, "; "))
	}
	logs := pg.out.String()
	res.add("circuit of acq-a", "%s (cooldown %s)", circuitChanges(logs, "acq-a", killedAt), cooldown)

	ra, err := a.record(ctx)
	if err != nil {
		return res, fmt.Errorf("records of A: %w", err)
	}
	rb, err := b.record(ctx)
	if err != nil {
		return res, fmt.Errorf("records of B: %w", err)
	}
	if res, err = l.verify(res, ra, rb, p1, p2); err != nil {
		return res, err
	}
	closedAt := circuitClosedAfter(logs, "acq-a", backAt)
	res.add("capture landing", "%s", landing("captures", heldDown, ra, backAt, closedAt))
	res.add("cancel landing", "%s", landing("cancels", canceledDown, ra, backAt, closedAt))
	res.add("whole run", "%s (after the build)", time.Since(began).Round(100*time.Millisecond))
	return res, nil
}

// landing says when the follow-ups (what: captures, cancels) sent while A
// was down landed on A, measured from A's return: median and max, and
// when A's circuit closed.
func landing(what string, held []*failoverPayment, ra acqRecord, backAt, closedAt time.Time) string {
	var ds []time.Duration
	for _, p := range held {
		if t, ok := ra.landed[p.amount]; ok {
			ds = append(ds, t.Sub(backAt))
		}
	}
	if len(ds) == 0 {
		return fmt.Sprintf("none of the %d %s sent while A was down landed on A", len(held), what)
	}
	slices.Sort(ds)
	closed := "its circuit's close not logged"
	if !closedAt.IsZero() {
		closed = fmt.Sprintf("its circuit closed %.2fs after", closedAt.Sub(backAt).Seconds())
	}
	return fmt.Sprintf("%d of the %d %s sent while A was down landed on A, after A was back: median %.2fs, max %.2fs (%s)",
		len(ds), len(held), what, ds[len(ds)/2].Seconds(), ds[len(ds)-1].Seconds(), closed)
}

// acqProcess is a standalone sandbox acquirer (`paygate sandbox-acquirer`),
// restartable on the port it first got with its state file.
type acqProcess struct {
	name, bin, key, state string
	keyFile               string // holds key, for `providers add`
	addr                  string
	cmd                   *exec.Cmd
	exited                chan struct{}
}

var acqListeningRe = regexp.MustCompile(`sandbox acquirer listening on (http://\S+)`)

// start starts the acquirer with more flags (faults) and waits until it
// listens. A restart whose port is not free yet is tried again.
func (q *acqProcess) start(ctx context.Context, more []string) error {
	addr := cmp.Or(q.addr, "127.0.0.1:0")
	var err error
	for range 20 {
		args := append([]string{"sandbox-acquirer", "--addr", addr, "--api-key", q.key, "--state-file", q.state}, more...)
		cmd := exec.CommandContext(ctx, q.bin, args...)
		out := &lineWaiter{re: acqListeningRe, found: make(chan []string, 1)}
		cmd.Stdout, cmd.Stderr = out, out
		if err = cmd.Start(); err != nil {
			return err
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		select {
		case m := <-out.found:
			q.cmd, q.exited = cmd, exited
			q.addr = strings.TrimPrefix(m[1], "http://")
			return nil
		case <-exited:
			err = fmt.Errorf("acquirer %s exited before listening: %s", q.name, out.String())
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("acquirer %s did not start: %s", q.name, out.String())
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil { // the port's last owner is going
			return err
		}
	}
	return err
}

// kill sends SIGKILL and waits until the process is gone.
func (q *acqProcess) kill() {
	if q.cmd != nil {
		_ = q.cmd.Process.Kill()
		<-q.exited
		q.cmd = nil
	}
}

func (q *acqProcess) url() string { return "http://" + q.addr }

var _ failoverAcquirer = (*acqProcess)(nil)

func (q *acqProcess) up(ctx context.Context, faulty bool) error {
	if faulty {
		return q.start(ctx, failoverFaults)
	}
	return q.start(ctx, nil)
}

func (q *acqProcess) down() { q.kill() }

func (q *acqProcess) account(string) ([]string, error) {
	return []string{"--kind", "sandbox", "--url", q.url(), "--api-key-file", q.keyFile}, nil
}

func (q *acqProcess) describe() string {
	return "a sandbox acquirer (its own process and state file), killed with SIGKILL"
}

// faults is the sandbox's mix; its dice roll on every /v1 request, its
// status reads included (docs/reliability.md, Failover). What it met is
// not known outside it.
func (q *acqProcess) faults() (string, []string) { return strings.Join(failoverFaults, " "), nil }

// moves: the sandbox's 503 says nothing was done, so a payment may move
// after it (provider_unreachable), or skip A while A's circuit is open.
func (q *acqProcess) moves() []string { return []string{"provider_unreachable", "circuit_open"} }

// record reads the acquirer's ledger over HTTP, as any client would.
func (q *acqProcess) record(ctx context.Context) (acqRecord, error) {
	var r acqRecord
	es, err := sandbox.NewAdapter(q.url(), q.key, nil).Ledger(ctx)
	for _, e := range es {
		r.add(e.Kind, e.AmountMinor, e.At)
	}
	return r, err
}

// runCLI runs a paygate command on the database of spec.
func runCLI(ctx context.Context, spec paygateSpec, args ...string) error {
	args = append(args, "--data-dir", spec.dataDir)
	if spec.databaseURL != "" {
		args = append(args, "--database-url", spec.databaseURL)
	}
	if out, err := exec.CommandContext(ctx, spec.bin, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("paygate %s: %w: %s", strings.Join(args[:2], " "), err, out)
	}
	return nil
}

var circuitRe = regexp.MustCompile(`"time":"([^"]+)","level":"WARN","msg":"an acquirer's circuit changed","provider":"([^"]+)","circuit":"([a-z_]+)"`)

// circuitChanges lists the changes of an account's circuit that serve
// logged, each with its time after from: "open +0.02s, closed +3.1s".
func circuitChanges(logs, provider string, from time.Time) string {
	var out []string
	for _, m := range circuitRe.FindAllStringSubmatch(logs, -1) {
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if m[2] != provider || err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s %+.2fs", m[3], at.Sub(from).Seconds()))
	}
	if len(out) == 0 {
		return "never changed"
	}
	return strings.Join(out, ", ") + " from the kill"
}

// circuitClosedAfter is when serve logged the account's circuit closed,
// the first time at or after from; zero if never.
func circuitClosedAfter(logs, provider string, from time.Time) time.Time {
	for _, m := range circuitRe.FindAllStringSubmatch(logs, -1) {
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err == nil && m[2] == provider && m[3] == "closed" && !at.Before(from) {
			return at
		}
	}
	return time.Time{}
}

func noneIfEmpty(s string) string { return cmp.Or(s, "none") }
