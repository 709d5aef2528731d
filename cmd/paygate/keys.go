package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/store"
)

// migrate brings the database up to date and says where it stands.
func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", stderr)
	db := dbFlags{create: true} // any process may start the database (docs/cli.md, "migrate")
	db.register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	a, err := db.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	v, err := a.store.MigrationVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s database at migration %d\n", a.store.Dialect(), v)
	return nil
}

// keys: create, list, revoke (docs/design/decisions.md section 10).
func keys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db, asJSON, err := dbCommand("keys", "create, list or revoke", args, getenv, stderr)
	if err != nil {
		return err
	}
	name := fs.String("name", "", "a name for the key (create)")
	direct := fs.Bool("direct-card-data", false, "grant the raw card data permission (create)")
	noDirect := fs.Bool("no-direct-card-data", false, "withhold the raw card data permission in the sandbox (create)")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err.Error()}
	}
	open := func() (*opened, error) { return db.open(ctx, stderr) }
	switch args[0] {
	case "create":
		if *name == "" {
			return usageError{"keys create needs --name"}
		}
		if *direct && *noDirect {
			return usageError{"--direct-card-data and --no-direct-card-data exclude each other"}
		}
		a, err := open()
		if err != nil {
			return err
		}
		defer a.close()
		core, err := a.services()
		if err != nil {
			return err
		}
		// In the sandbox the permission is granted unless withheld
		// (docs/design/decisions.md section 10).
		grant := *direct || (a.env == merchant.Sandbox && !*noDirect)
		k, err := core.Merchants.Create(ctx, merchant.NewKey{Name: *name, DirectCardData: grant})
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(map[string]string{"access_key": k.Key.AccessKey, "secret": k.Secret})
		}
		fmt.Fprintf(stdout, "access key  %s\nsecret      %s\n\nThe secret is shown this once.\n", k.Key.AccessKey, k.Secret)
		return nil
	case "list":
		a, err := open()
		if err != nil {
			return err
		}
		defer a.close()
		ks, err := a.store.ListKeys(ctx)
		if err != nil {
			return err
		}
		return printKeys(stdout, ks, *asJSON)
	case "revoke":
		if fs.NArg() != 1 {
			return usageError{"keys revoke needs one ACCESS_KEY"}
		}
		a, err := open()
		if err != nil {
			return err
		}
		defer a.close()
		core, err := a.services()
		if err != nil {
			return err
		}
		if err := core.Merchants.Revoke(ctx, fs.Arg(0)); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no key %s", fs.Arg(0))
		} else if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", fs.Arg(0))
		return nil
	}
	return usageError{fmt.Sprintf("unknown keys command %q", args[0])}
}

type keyRow struct {
	AccessKey      string     `json:"access_key"`
	Name           string     `json:"name"`
	Environment    string     `json:"environment"`
	DirectCardData bool       `json:"direct_card_data"`
	CreatedAt      time.Time  `json:"created_at"`
	RevokedAt      *time.Time `json:"revoked_at"`
}

func printKeys(w io.Writer, ks []merchant.Key, asJSON bool) error {
	rows := []keyRow{}
	for _, k := range ks {
		rows = append(rows, keyRow{k.AccessKey, k.Name, k.Environment, k.DirectCardData, k.CreatedAt, k.RevokedAt})
	}
	if asJSON {
		return json.NewEncoder(w).Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCESS KEY\tNAME\tDIRECT CARD DATA\tCREATED\tSTATUS")
	for _, r := range rows {
		status := "active"
		if r.RevokedAt != nil {
			status = "revoked " + r.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\n", r.AccessKey, r.Name, r.DirectCardData, r.CreatedAt.Format(time.RFC3339), status)
	}
	return tw.Flush()
}
