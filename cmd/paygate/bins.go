package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/store"
)

// bins: import, versions, activate (docs/bins.md). The versioned BIN base
// answers GET /cards/information and classifies cards at payment time.
func bins(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db, asJSON, err := dbCommand("bins", "import, versions or activate", args, getenv, stderr)
	if err != nil {
		return err
	}
	activate := fs.Bool("activate", false, "make the imported version the active one (import)")
	label := fs.String("label", "", "a label for the imported version; default: the file name (import)")
	operands, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return usageError{err.Error()}
	}
	switch args[0] {
	case "import":
		if len(operands) != 1 {
			return usageError{"bins import needs one FILE.csv"}
		}
	case "versions":
		if len(operands) != 0 {
			return usageError{"bins versions takes no operand"}
		}
	case "activate":
		if len(operands) != 1 {
			return usageError{"bins activate needs one VERSION id"}
		}
	default:
		return usageError{fmt.Sprintf("unknown bins command %q", args[0])}
	}
	var file *os.File
	if args[0] == "import" {
		// Open the file before the database, so a wrong path costs nothing.
		if file, err = os.Open(operands[0]); err != nil {
			return err
		}
		defer file.Close()
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

	var v cardinfo.Version
	switch args[0] {
	case "versions":
		vs, err := core.BINs.Versions(ctx)
		if err != nil {
			return err
		}
		return printBINVersions(stdout, vs, *asJSON)
	case "import":
		err = a.store.InTx(ctx, func(tx *store.Tx) (err error) {
			v, err = core.BINs.Import(ctx, tx, cardinfo.ImportRequest{
				Label: *label, Source: filepath.Base(operands[0]), CSV: file, Activate: *activate,
			})
			return err
		})
	case "activate":
		err = a.store.InTx(ctx, func(tx *store.Tx) (err error) {
			v, err = core.BINs.Activate(ctx, tx, operands[0])
			return err
		})
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no BIN version %s (see paygate bins versions)", operands[0])
		}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(binVersionRow(v))
	}
	verb := "imported"
	if args[0] == "activate" {
		verb = "activated"
	}
	state := "not active: paygate bins activate " + v.ID
	if v.Active {
		state = "active"
	}
	fmt.Fprintf(stdout, "%s BIN version %s (%s, %d rows), %s\n", verb, v.ID, v.Label, v.Entries, state)
	return nil
}

// parseInterspersed parses flags that may come before, between or after
// the operands (`bins import FILE.csv --activate`), and returns the operands.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return operands, nil
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

type binVersionJSON struct {
	ID          string     `json:"id"`
	Label       string     `json:"label"`
	Source      string     `json:"source"`
	Rows        int64      `json:"rows"`
	CreatedAt   time.Time  `json:"created_at"`
	ActivatedAt *time.Time `json:"activated_at"`
	Active      bool       `json:"active"`
}

func binVersionRow(v cardinfo.Version) binVersionJSON {
	return binVersionJSON{v.ID, v.Label, v.Source, v.Entries, v.CreatedAt, v.ActivatedAt, v.Active}
}

func printBINVersions(w io.Writer, vs []cardinfo.Version, asJSON bool) error {
	if asJSON {
		rows := []binVersionJSON{}
		for _, v := range vs {
			rows = append(rows, binVersionRow(v))
		}
		return json.NewEncoder(w).Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLABEL\tSOURCE\tROWS\tCREATED\tACTIVE")
	for _, v := range vs {
		active := ""
		if v.Active {
			active = "active"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", v.ID, v.Label, v.Source, v.Entries, v.CreatedAt.Format(time.RFC3339), active)
	}
	return tw.Flush()
}
