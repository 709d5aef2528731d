package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
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
	position := fs.Int("position", 0, "assign: the channel's place in the key's routing order, 1 first; 0: where it is (last if new)")
	weight := fs.Int("weight", 0, "assign: its share of the payments among the channels of its position (default 1)")
	schemes := fs.String("schemes", "", "assign: only cards of these schemes, comma-separated (visa,mastercard,...)")
	countries := fs.String("card-countries", "", "assign: only cards issued in these countries (ISO alpha-2, from the BIN base), comma-separated")
	minAmount := fs.String("min-amount", "", "assign: only payments of at least this amount (minor units)")
	maxAmount := fs.String("max-amount", "", "assign: only payments of at most this amount (minor units)")
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
		routed := false
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "position", "weight", "schemes", "card-countries", "min-amount", "max-amount":
				routed = true
			}
		})
		if routed {
			r := merchant.Route{Position: *position, Weight: *weight, Schemes: split(*schemes), CardCountries: split(*countries)}
			if r.MinAmount, err = amountFlag("--min-amount", *minAmount); err != nil {
				return err
			}
			if r.MaxAmount, err = amountFlag("--max-amount", *maxAmount); err != nil {
				return err
			}
			err = core.Merchants.Place(ctx, *key, *alias, r)
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
			rows = append(rows, channelRow(c.Channel, c.Route.Position, c.AccountStatus))
			rows[i].Route = &routeRow{c.Route.Position, max(c.Route.Weight, 1), nonNil(c.Route.Schemes),
				nonNil(c.Route.CardCountries), c.Route.MinAmount, c.Route.MaxAmount}
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
		fmt.Fprintln(tw, "#\tALIAS\tPROVIDER/PROFILE\tCHECKOUT\tMETHODS\tCURRENCIES\tACCOUNT\tRULES")
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
			fmt.Fprintf(tw, "\t%s\t%s", r.AccountStatus, orDash(r.rules))
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
	// Position is the channel's place in the key's routing order (1 is
	// tried first), its account's status and its route: with --key only.
	Position      int       `json:"position,omitempty"`
	AccountStatus string    `json:"account_status,omitempty"`
	Route         *routeRow `json:"route,omitempty"`
	rules         string
}

// routeRow is a channel's route for one key (docs/design/decisions.md
// section 17).
type routeRow struct {
	Position      int      `json:"position"`
	Weight        int      `json:"weight"`
	Schemes       []string `json:"schemes"`
	CardCountries []string `json:"card_countries"`
	MinAmount     *int64   `json:"min_amount"`
	MaxAmount     *int64   `json:"max_amount"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// amountFlag reads an amount flag: empty is no bound.
func amountFlag(name, v string) (*int64, error) {
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, errors.New(name + " must be a whole amount in minor units")
	}
	return &n, nil
}

func channelRow(c merchant.Channel, position int, status string) row {
	return row{ID: c.ID, Alias: c.Alias, Provider: c.Provider, Profile: c.Profile, PaymentMethods: c.PaymentMethods,
		Currencies: c.Currencies, CheckoutMode: c.CheckoutMode, AutoAssign: c.AutoAssign, Position: position,
		AccountStatus: status, rules: c.Route.Rules()}
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
