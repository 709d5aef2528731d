// Command paygate is Paygate's one binary: the server and every tool
// (docs/design/decisions.md section 10).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/paygate/paygate/internal/openapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintln(os.Stderr, "paygate:", err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "paygate:", err)
		os.Exit(1)
	}
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

const usage = `paygate: a payment gateway

Usage:
  paygate serve      [flags]                 run the API and the background workers
  paygate migrate    [flags]                 bring the database up to date
  paygate keys       create --name NAME [--json] [--direct-card-data | --no-direct-card-data]
  paygate keys       list [--json]
  paygate keys       revoke ACCESS_KEY
  paygate providers  add --name NAME --kind stripe --secret-key-file F [--webhook-secret-file F] [--base-url URL]
  paygate providers  add --name NAME --kind sandbox --url URL --api-key-file F
  paygate providers  list [--json]           the acquirer accounts; never a secret
  paygate providers  disable NAME            no new payment goes to it; what it holds still does
  paygate providers  enable NAME             new payments may go to it again
  paygate channels   list [--key ACCESS_KEY] [--json]
  paygate channels   create --alias A --provider NAME --methods card[,apple_pay,...] --currencies USD[,EUR,...]
                     [--checkout-mode platform|provider_redirect] [--auto-assign]
  paygate channels   assign --key ACCESS_KEY --channel ALIAS [--position N]
  paygate channels   unassign --key ACCESS_KEY --channel ALIAS
  paygate limits     set --key ACCESS_KEY --allowance collection|payout --currency CUR [--daily N] [--per-transaction N]
  paygate limits     unset --key ACCESS_KEY --allowance collection|payout --currency CUR [--daily] [--per-transaction]
  paygate limits     show --key ACCESS_KEY [--json]
  paygate users      create --email E --key ACCESS_KEY [--key AK2] [--role admin|viewer] [--json]
                                             a cabinet user; prints a one-time setup link
  paygate users      list [--json]
  paygate users      disable --email E        no more sign-in; their sessions end
  paygate users      grant --email E --key ACCESS_KEY
  paygate users      setup-link --email E [--json]
  paygate bins       import FILE.csv [--activate] [--label LABEL] [--json]
  paygate bins       versions [--json]
  paygate bins       activate VERSION
  paygate call       METHOD PATH [-d JSON|@FILE] [-H 'Name: value'] [-v] [--max-wait 30s]
  paygate webhooks   add --key ACCESS_KEY --url URL [--event-types a,b] [--json]
  paygate webhooks   list [--key ACCESS_KEY] [--json]
  paygate webhooks   remove ENDPOINT_ID
  paygate webhooks   rotate-secret ENDPOINT_ID [--overlap 24h] [--json]
  paygate listen     --forward-to URL [--secret whsec_...] [--events a,b] [--interval 1s] [--json]
                                             forward the key's events, signed, to a local URL
  paygate trigger    EVENT_TYPE              sandbox activity that produces the event (payment.succeeded, ...)
  paygate master-key rotate [--json]           a new master key; every sealed value re-wrapped
  paygate reconcile  --provider NAME --date YYYY-MM-DD [--json]
                                             the day's movements against the acquirer's records; exit 1 on breaks
  paygate backup     --to FILE [--data-dir D]  a consistent copy of the SQLite database, also while serve runs
  paygate sandbox-acquirer [--addr ADDR] [--api-key K] [--state-file F]
                                             run the sandbox acquirer on its own
  paygate version                            also --version

Database flags (serve, migrate, keys, channels, providers, limits, users, bins, webhooks,
master-key, reconcile): --data-dir, --database-url, --environment, --master-key-file, --log-level.
Each names its data folder and database on its first line of stderr; all but serve and
migrate refuse to start a new data folder unless given --init.
"paygate COMMAND -h" prints a command's flags.
`

// run is the whole program (docs/design/style.md: main only calls run).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{"a command is needed"}
	}
	cmd, rest := args[0], args[1:]
	if helpAsked(rest) {
		if groups[cmd] && (len(rest) == 0 || strings.HasPrefix(rest[0], "-")) {
			fmt.Fprintln(stdout, "Usage:")
			for _, l := range synopsis(cmd) {
				fmt.Fprintln(stdout, l)
			}
			fmt.Fprintf(stdout, "\nRun \"paygate %s COMMAND -h\" for the flags of one.\n", cmd)
			return nil
		}
		// Asked for, the usage is the answer: on stdout, exit status 0.
		stderr = stdout
	}
	err := dispatch(ctx, cmd, rest, getenv, stdin, stdout, stderr)
	if isHelp(err) {
		return nil
	}
	return err
}

// groups are the commands whose first argument names a subcommand.
var groups = map[string]bool{"keys": true, "channels": true, "providers": true, "limits": true, "users": true,
	"bins": true, "webhooks": true, "master-key": true}

// dispatch runs one command.
func dispatch(ctx context.Context, cmd string, rest []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, stdout, stderr)
	case "reconcile":
		return reconcileDay(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, rest, getenv, stdout, stderr)
	case "keys":
		return keys(ctx, rest, getenv, stdout, stderr)
	case "providers":
		return providers(ctx, rest, getenv, stdout, stderr)
	case "channels":
		return channels(ctx, rest, getenv, stdout, stderr)
	case "limits":
		return limits(ctx, rest, getenv, stdout, stderr)
	case "users":
		return users(ctx, rest, getenv, stdout, stderr)
	case "master-key":
		return masterKey(ctx, rest, getenv, stdout, stderr)
	case "backup":
		return backup(ctx, rest, getenv, stdout, stderr)
	case "sandbox-acquirer":
		return sandboxAcquirer(ctx, rest, getenv, stdout, stderr)
	case "bins":
		return bins(ctx, rest, getenv, stdout, stderr)
	case "call":
		return call(ctx, rest, getenv, stdin, stdout, stderr)
	case "webhooks":
		return webhooks(ctx, rest, getenv, stdout, stderr)
	case "listen":
		return listen(ctx, rest, getenv, stdout, stderr)
	case "trigger":
		return trigger(ctx, rest, getenv, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "paygate", version, "(API", openapi.Version()+")")
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", cmd)}
}

// version is the service version (GET /health's service_version); the
// client API's is the OpenAPI document's info.version (openapi.Version).
const version = "0.1.0"
