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

// channels: list, assign, unassign.
func channels(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db, asJSON, err := dbCommand("channels", "list, assign or unassign", args, getenv, stderr)
	if err != nil {
		return err
	}
	key := fs.String("key", "", "access key")
	alias := fs.String("channel", "", "channel alias")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err.Error()}
	}
	switch args[0] {
	case "list":
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
	case "assign":
		if err := notFound(core.Merchants.Assign(ctx, *key, *alias)); err != nil {
			return err
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
	var cs []merchant.Channel
	if *key != "" {
		k, err := a.store.FindKeyByAccessKey(ctx, *key)
		if err := notFound(err); err != nil {
			return fmt.Errorf("key %s: %w", *key, err)
		}
		cs, err = a.store.ChannelsForKey(ctx, k.ID)
		if err != nil {
			return err
		}
	} else if cs, err = a.store.ListChannels(ctx); err != nil {
		return err
	}
	if *asJSON {
		type row struct {
			ID             string   `json:"id"`
			Alias          string   `json:"alias"`
			Provider       string   `json:"provider"`
			Profile        string   `json:"profile"`
			PaymentMethods []string `json:"payment_methods"`
			Currencies     []string `json:"currencies"`
			CheckoutMode   string   `json:"checkout_mode"`
		}
		rows := []row{}
		for _, c := range cs {
			rows = append(rows, row{c.ID, c.Alias, c.Provider, c.Profile, c.PaymentMethods, c.Currencies, c.CheckoutMode})
		}
		return json.NewEncoder(stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ALIAS\tPROVIDER/PROFILE\tCHECKOUT\tMETHODS\tCURRENCIES")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\n", c.Alias, c.Provider, c.Profile, c.CheckoutMode,
			strings.Join(c.PaymentMethods, ","), strings.Join(c.Currencies, ","))
	}
	return tw.Flush()
}

// notFound turns the store's not-found into a readable message.
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errors.New("not found (check the access key and the channel alias)")
	}
	return err
}
