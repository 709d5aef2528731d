package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/store"
)

// limits: set, unset, show a key's allowances (docs/design/decisions.md
// section 12; docs/limits.md).
func limits(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db, asJSON, err := dbCommand("limits", "set, unset or show", args, getenv, stderr)
	if err != nil {
		return err
	}
	accessKey := fs.String("key", "", "the access key")
	kind := fs.String("allowance", "", "collection or payout (set, unset)")
	currency := fs.String("currency", "", "an ISO 4217 currency code (set, unset)")
	// set takes amounts; unset names the limits to remove, without values.
	var daily, perTx optionalMinor
	if args[0] == "unset" {
		fs.BoolVar(&daily.set, "daily", false, "remove the daily limit (neither flag: both)")
		fs.BoolVar(&perTx.set, "per-transaction", false, "remove the per-transaction limit (neither flag: both)")
	} else {
		fs.Var(&daily, "daily", "the daily limit in minor units (set)")
		fs.Var(&perTx, "per-transaction", "the per-transaction limit in minor units (set)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err.Error()}
	}
	if *accessKey == "" {
		return usageError{"limits " + args[0] + " needs --key"}
	}
	cmd := args[0]
	if cmd != "set" && cmd != "unset" && cmd != "show" {
		return usageError{fmt.Sprintf("unknown limits command %q", cmd)}
	}
	if cmd != "show" {
		if !allowance.Known(allowance.Kind(*kind)) {
			return usageError{"--allowance must be collection or payout"}
		}
		*currency = strings.ToUpper(*currency)
		if !money.Known(*currency) {
			return usageError{"--currency must be an ISO 4217 currency code"}
		}
		if cmd == "set" && !daily.set && !perTx.set {
			return usageError{"limits set needs --daily or --per-transaction"}
		}
	}
	a, err := db.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	key, err := a.store.FindKeyByAccessKey(ctx, *accessKey)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no key %s", *accessKey)
	} else if err != nil {
		return err
	}
	if cmd == "show" {
		return showLimits(ctx, a.store, key.ID, stdout, *asJSON)
	}
	s, err := a.store.FindAllowance(ctx, key.ID, allowance.Kind(*kind), *currency)
	if err != nil {
		return err
	}
	if s == nil {
		s = &allowance.Setting{KeyID: key.ID, Allowance: allowance.Kind(*kind), Currency: *currency}
	}
	if cmd == "set" {
		if daily.set {
			s.DailyMinor = &daily.v
		}
		if perTx.set {
			s.PerTransactionMinor = &perTx.v
		}
	} else {
		both := !daily.set && !perTx.set
		if both || daily.set {
			s.DailyMinor = nil
		}
		if both || perTx.set {
			s.PerTransactionMinor = nil
		}
	}
	s.UpdatedAt = time.Now().UTC().Truncate(time.Microsecond)
	if err := a.store.PutAllowance(ctx, *s); err != nil {
		return err
	}
	return showLimits(ctx, a.store, key.ID, stdout, *asJSON)
}

// optionalMinor is an amount flag that records whether it was given.
type optionalMinor struct {
	v   int64
	set bool
}

func (o *optionalMinor) String() string { return "" }

func (o *optionalMinor) Set(s string) error {
	var v int64
	if _, err := fmt.Sscanf(s, "%d", &v); err != nil || v < 0 || fmt.Sprint(v) != s {
		return errors.New("must be a whole amount in minor units, 0 or more")
	}
	o.v, o.set = v, true
	return nil
}

// limitRow is one allowance as `limits show` prints it: the figures of
// listLimits (GET /limits).
type limitRow struct {
	Allowance           string    `json:"allowance"`
	Currency            string    `json:"currency"`
	PerTransactionMinor *int64    `json:"per_transaction_minor"`
	DailyMinor          *int64    `json:"daily_minor"`
	UsedMinor           int64     `json:"used_minor"`
	ReservedMinor       int64     `json:"reserved_minor"`
	RemainingMinor      *int64    `json:"remaining_minor"`
	ResetsAt            time.Time `json:"resets_at"`
}

func showLimits(ctx context.Context, st *store.Store, keyID string, w io.Writer, asJSON bool) error {
	settings, err := st.ListAllowances(ctx, keyID)
	if err != nil {
		return err
	}
	now := time.Now()
	rows := []limitRow{}
	for _, s := range settings {
		u, err := st.AllowanceUsage(ctx, keyID, s.Allowance, s.Currency, allowance.Day(now))
		if err != nil {
			return err
		}
		f := allowance.FiguresOf(s, u, now)
		rows = append(rows, limitRow{string(s.Allowance), s.Currency, s.PerTransactionMinor, s.DailyMinor,
			u.UsedMinor, u.ReservedMinor, f.RemainingMinor, f.ResetsAt})
	}
	if asJSON {
		return json.NewEncoder(w).Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "no allowances: unlimited")
		return nil
	}
	opt := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ALLOWANCE\tCURRENCY\tPER TRANSACTION\tDAILY\tUSED\tRESERVED\tREMAINING\tRESETS AT")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.Allowance, r.Currency, opt(r.PerTransactionMinor),
			opt(r.DailyMinor), r.UsedMinor, r.ReservedMinor, opt(r.RemainingMinor), r.ResetsAt.Format(time.RFC3339))
	}
	return tw.Flush()
}
