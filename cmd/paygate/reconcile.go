package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/paygate/paygate/internal/reconcile"
)

// breaksFound is reconcile's exit 1: the day has breaks (printed).
type breaksFound struct{ n int }

func (b breaksFound) Error() string { return fmt.Sprintf("%d breaks", b.n) }

// reconcileDay: paygate reconcile --provider NAME --date YYYY-MM-DD
// [--json] (docs/design/decisions.md section 18; docs/reconciliation.md):
// exit 0 with no breaks, 1 with breaks (or a failure), 2 on a usage error.
func reconcileDay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reconcile", stderr)
	db := &dbFlags{}
	db.register(fs, getenv)
	db.registerInit(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	name := fs.String("provider", "", "the provider account to reconcile (paygate providers list)")
	date := fs.String("date", "", "the UTC day, YYYY-MM-DD")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *name == "" || *date == "" {
		return usageError{"reconcile needs --provider and --date"}
	}
	day, err := time.Parse(time.DateOnly, *date)
	if err != nil {
		return usageError{"--date must be a day, YYYY-MM-DD"}
	}
	a, err := db.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	core, err := a.services()
	if err != nil {
		return err
	}
	res, err := core.Reconciler.Run(ctx, *name, day)
	if err != nil {
		return err
	}
	breaks := func(fn func(reconcile.Break) error) error {
		return a.store.EachReconciliationBreak(ctx, res.Provider, res.Day, fn)
	}
	if *asJSON {
		err = writeReport(stdout, res, breaks)
	} else {
		err = printReport(stdout, res, breaks)
	}
	if err != nil {
		return err
	}
	if n := res.Breaks(); n > 0 {
		return breaksFound{n}
	}
	return nil
}

// report is a day's result as --json prints it: counts, and every break
// with both sides. No card data: none is kept on either side.
type report struct {
	Provider   string         `json:"provider"`
	Day        string         `json:"day"`
	Paygate    int            `json:"paygate_movements"`
	AtProvider int            `json:"provider_movements"`
	Matched    int            `json:"matched"`
	Pending    int            `json:"pending"`
	FeesMinor  int64          `json:"fees_minor"`
	ByKind     map[string]int `json:"breaks_by_kind"`
	Breaks     []breakRow     `json:"breaks"`
}

type breakRow struct {
	Kind        string    `json:"kind"`
	OperationID string    `json:"operation_id,omitempty"`
	PaymentID   string    `json:"payment_id,omitempty"`
	AccessKeyID string    `json:"access_key_id,omitempty"`
	Paygate     *sideView `json:"paygate"`
	Provider    *sideView `json:"provider"`
}

type sideView struct {
	Kind        string    `json:"kind"`
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	At          time.Time `json:"at"`
	Ref         string    `json:"ref,omitempty"`
}

func viewOf(s *reconcile.Side) *sideView {
	if s == nil {
		return nil
	}
	return &sideView{Kind: s.Kind, AmountMinor: s.AmountMinor, Currency: s.Currency, At: s.At.UTC(), Ref: s.Ref}
}

// writeReport writes the day's report as one JSON object, its breaks
// streamed from the store as they are read (a day may have many).
func writeReport(w io.Writer, r reconcile.Result, breaks func(func(reconcile.Break) error) error) error {
	head, err := json.Marshal(report{Provider: r.Provider, Day: r.Day.Format(time.DateOnly), Paygate: r.Paygate,
		AtProvider: r.AtProvider, Matched: r.Matched, Pending: r.Pending, FeesMinor: r.FeesMinor, ByKind: r.ByKind})
	if err != nil {
		return err
	}
	// The head ends with "breaks":null}: the array goes in its place.
	if !bytes.HasSuffix(head, []byte(`"breaks":null}`)) {
		return fmt.Errorf("reconcile: the report's breaks must be its last field")
	}
	head = bytes.TrimSuffix(head, []byte(`null}`))
	bw := bufio.NewWriter(w)
	bw.Write(head)
	bw.WriteByte('[')
	n := 0
	if err := breaks(func(b reconcile.Break) error {
		row, err := json.Marshal(breakRow{Kind: b.Kind, OperationID: b.Key, PaymentID: b.PaymentID,
			AccessKeyID: b.AccessKeyID, Paygate: viewOf(b.Paygate), Provider: viewOf(b.Provider)})
		if err != nil {
			return err
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		n++
		_, err = bw.Write(row)
		return err
	}); err != nil {
		return err
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

func printReport(w io.Writer, r reconcile.Result, breaks func(func(reconcile.Break) error) error) error {
	fmt.Fprintf(w, "%s %s: %d movements at Paygate, %d at the acquirer, %d matched, %d pending, %d breaks, fees %d\n",
		r.Provider, r.Day.Format(time.DateOnly), r.Paygate, r.AtProvider, r.Matched, r.Pending, r.Breaks(), r.FeesMinor)
	if r.Breaks() == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tOPERATION\tPAYMENT\tPAYGATE\tACQUIRER")
	side := func(s *reconcile.Side) string {
		if s == nil {
			return "-"
		}
		return fmt.Sprintf("%s %d %s %s", s.Kind, s.AmountMinor, s.Currency, s.At.UTC().Format("15:04:05"))
	}
	if err := breaks(func(b reconcile.Break) error {
		_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.Kind, orDash(b.Key), orDash(b.PaymentID), side(b.Paygate), side(b.Provider))
		return err
	}); err != nil {
		return err
	}
	return tw.Flush()
}
