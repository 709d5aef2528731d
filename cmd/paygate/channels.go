package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/store"
)

// channels: list, create, assign, unassign (docs/design/decisions.md
// sections 10 and 16).
func channels(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db, asJSON, err := dbCommand("channels", "list, create, assign or unassign", args, getenv, stderr)
	if err != nil {
		return err
	}
	key := fs.String("key", "", "access key")
	alias := fs.String("channel", "", "channel alias (assign, unassign)")
	position := fs.Int("position", 0, "assign: the channel's place in the key's routing order, 1 first; 0: last")
	newAlias := fs.String("alias", "", "create: the new channel's alias")
	prov := fs.String("provider", "", "create: the provider account's name (paygate providers list)")
	methods := fs.String("methods", "", "create: payment methods, comma-separated: "+strings.Join(merchant.Methods, ","))
	currencies := fs.String("currencies", "", "create: ISO 4217 currencies, comma-separated")
	mode := fs.String("checkout-mode", merchant.CheckoutPlatform, "create: platform or provider_redirect")
	profile := fs.String("profile", "default", "create: the provider profile")
	autoAssign := fs.Bool("auto-assign", false, "create: every key created from now on gets the channel")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err.Error()}
	}
	switch args[0] {
	case "list":
	case "create":
		if *newAlias == "" || *prov == "" || *methods == "" || *currencies == "" {
			return usageError{"channels create needs --alias, --provider, --methods and --currencies"}
		}
	case "assign", "unassign":
		if *key == "" || *alias == "" {
			return usageError{"channels " + args[0] + " needs --key and --channel"}
		}
	default:
		return usageError{fmt.Sprintf("unknown channels command %q", args[0])}
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
	switch args[0] {
	case "create":
		c, err := core.Merchants.CreateChannel(ctx, merchant.Channel{Alias: *newAlias, Provider: *prov, Profile: *profile,
			PaymentMethods: split(*methods), Currencies: split(*currencies), CheckoutMode: *mode, AutoAssign: *autoAssign},
			core.Accounts)
		if err != nil {
			return plain(err)
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(channelRow(c, 0, ""))
		}
		fmt.Fprintf(stdout, "created channel %s on %s\nnext: paygate channels assign --key ACCESS_KEY --channel %s\n", c.Alias, c.Provider, c.Alias)
		return nil
	case "assign":
		if *position != 0 {
			err = core.Merchants.Place(ctx, *key, *alias, *position)
		} else {
			err = core.Merchants.Assign(ctx, *key, *alias)
		}
		if err := notFound(err); err != nil {
			return plain(err)
		}
		fmt.Fprintf(stdout, "assigned %s to %s\n", *alias, *key)
		return nil
	case "unassign":
		if err := notFound(core.Merchants.Unassign(ctx, *key, *alias)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "unassigned %s from %s\n", *alias, *key)
		return nil
	}
	var rows []row
	if *key != "" {
		k, err := a.store.FindKeyByAccessKey(ctx, *key)
		if err := notFound(err); err != nil {
			return fmt.Errorf("key %s: %w", *key, err)
		}
		cs, err := a.store.AssignedChannels(ctx, k.ID)
		if err != nil {
			return err
		}
		for i, c := range cs {
			rows = append(rows, channelRow(c.Channel, i+1, c.AccountStatus))
		}
	} else {
		cs, err := a.store.ListChannels(ctx)
		if err != nil {
			return err
		}
		for _, c := range cs {
			rows = append(rows, channelRow(c, 0, ""))
		}
	}
	if *asJSON {
		if rows == nil {
			rows = []row{}
		}
		return json.NewEncoder(stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if *key != "" {
		fmt.Fprintln(tw, "#\tALIAS\tPROVIDER/PROFILE\tCHECKOUT\tMETHODS\tCURRENCIES\tACCOUNT")
	} else {
		fmt.Fprintln(tw, "ALIAS\tPROVIDER/PROFILE\tCHECKOUT\tMETHODS\tCURRENCIES")
	}
	for _, r := range rows {
		if *key != "" {
			fmt.Fprintf(tw, "%d\t", r.Position)
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s", r.Alias, r.Provider, r.Profile, r.CheckoutMode,
			strings.Join(r.PaymentMethods, ","), strings.Join(r.Currencies, ","))
		if *key != "" {
			fmt.Fprintf(tw, "\t%s", r.AccountStatus)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// row is a channel as `channels list --json` shows it; Position (1 is
// tried first) and AccountStatus only with --key.
type row struct {
	ID             string   `json:"id"`
	Alias          string   `json:"alias"`
	Provider       string   `json:"provider"`
	Profile        string   `json:"profile"`
	PaymentMethods []string `json:"payment_methods"`
	Currencies     []string `json:"currencies"`
	CheckoutMode   string   `json:"checkout_mode"`
	AutoAssign     bool     `json:"auto_assign"`
	Position       int      `json:"position,omitempty"`
	AccountStatus  string   `json:"account_status,omitempty"`
}

func channelRow(c merchant.Channel, position int, status string) row {
	return row{c.ID, c.Alias, c.Provider, c.Profile, c.PaymentMethods, c.Currencies, c.CheckoutMode, c.AutoAssign, position, status}
}

func split(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// notFound turns the store's not-found into a readable message.
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errors.New("not found (check the access key and the channel alias)")
	}
	return err
}
