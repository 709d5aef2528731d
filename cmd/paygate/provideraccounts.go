package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider/account"
)

// providers: add, list, disable, enable (docs/design/decisions.md section 16;
// docs/providers.md). Secrets come from files, never from the command line
// (where ps and the shell's history would see them), and are never printed.
func providers(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db, asJSON, err := dbCommand("providers", "add, list, disable or enable", args, getenv, stderr)
	if err != nil {
		return err
	}
	name := fs.String("name", "", "the account's name: a-z, 0-9 and -, as channels will name it")
	kind := fs.String("kind", "", "stripe or sandbox")
	secretFile := fs.String("secret-key-file", "", "stripe: a file holding the secret (sk_…) or restricted (rk_…) key")
	hookFile := fs.String("webhook-secret-file", "", "stripe: a file holding the webhook endpoint's signing secret (whsec_…)")
	baseURL := fs.String("base-url", "", "stripe: the API's base URL; empty: https://api.stripe.com")
	sandboxURL := fs.String("url", "", "sandbox: the standalone sandbox acquirer's URL")
	apiKeyFile := fs.String("api-key-file", "", "sandbox: a file holding the sandbox acquirer's API key")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err.Error()}
	}
	switch args[0] {
	case "add":
		if *name == "" || *kind == "" {
			return usageError{"providers add needs --name and --kind"}
		}
	case "list":
	case "disable", "enable":
		if fs.NArg() != 1 {
			return usageError{"providers " + args[0] + " needs the account's name: paygate providers " + args[0] + " NAME"}
		}
	default:
		return usageError{fmt.Sprintf("unknown providers command %q", args[0])}
	}
	in := account.NewAccount{Name: *name, Kind: *kind, BaseURL: *baseURL}
	if args[0] == "add" {
		// Read the files before opening the database: a missing file
		// stores nothing.
		var err error
		if in.Credentials.SecretKey, err = secretFrom(*secretFile, "--secret-key-file"); err != nil {
			return err
		}
		if in.Credentials.WebhookSecret, err = secretFrom(*hookFile, "--webhook-secret-file"); err != nil {
			return err
		}
		if in.Credentials.APIKey, err = secretFrom(*apiKeyFile, "--api-key-file"); err != nil {
			return err
		}
		if *sandboxURL != "" {
			if *kind != "sandbox" {
				return errors.New("--url is for --kind sandbox; a Stripe account takes --base-url")
			}
			in.BaseURL = *sandboxURL
		}
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
	case "add":
		acc, err := core.Accounts.Add(ctx, in)
		if err != nil {
			return plain(err)
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(accountRow(acc))
		}
		fmt.Fprintf(stdout, "added provider account %s (%s); its secrets are sealed and will not be shown again\n", acc.Name, acc.Kind)
		fmt.Fprintf(stdout, "next: paygate channels create --alias ALIAS --provider %s --methods card --currencies USD\n", acc.Name)
		return nil
	case "disable":
		if err := core.Accounts.Disable(ctx, fs.Arg(0)); err != nil {
			return plain(err)
		}
		fmt.Fprintf(stdout, "disabled %s: no new payment goes to it; what it holds still does\n", fs.Arg(0))
		return nil
	case "enable":
		if err := core.Accounts.Enable(ctx, fs.Arg(0)); err != nil {
			return plain(err)
		}
		fmt.Fprintf(stdout, "enabled %s: new payments may go to it again\n", fs.Arg(0))
		return nil
	}
	list, err := core.Accounts.List(ctx)
	if err != nil {
		return err
	}
	rows := []providerRow{}
	if a.env == merchant.Sandbox {
		rows = append(rows, providerRow{Name: account.Builtin, Kind: "sandbox", BaseURL: "(in-process, or serve --sandbox-url)",
			Status: account.Enabled, Builtin: true})
	}
	for _, acc := range list {
		rows = append(rows, accountRow(acc))
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tBASE URL\tSTATUS\tCREATED")
	for _, r := range rows {
		created := "built-in"
		if r.CreatedAt != nil {
			created = r.CreatedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Kind, orDash(r.BaseURL), r.Status, created)
	}
	return tw.Flush()
}

// providerRow is a provider account as `providers list` shows it: never
// a secret.
type providerRow struct {
	Name      string     `json:"name"`
	Kind      string     `json:"kind"`
	BaseURL   string     `json:"base_url"`
	Status    string     `json:"status"`
	Builtin   bool       `json:"builtin"`
	CreatedAt *time.Time `json:"created_at"`
}

func accountRow(a account.Account) providerRow {
	t := a.CreatedAt.UTC()
	return providerRow{Name: a.Name, Kind: a.Kind, BaseURL: a.BaseURL, Status: a.Status, CreatedAt: &t}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// secretFrom reads a secret from a file (empty path: none): its first
// line, trimmed. An unreadable or empty file is refused without quoting
// it.
func secretFrom(path, flagName string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flagName, path, errors.Unwrap(err))
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return "", fmt.Errorf("%s: %s is empty", flagName, path)
	}
	return line, nil
}

// plain turns a domain fault into its message: the operator reads a
// sentence, not an error code.
func plain(err error) error {
	var f *fault.Error
	if errors.As(err, &f) {
		return errors.New(f.Message)
	}
	return err
}
