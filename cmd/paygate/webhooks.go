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

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/webhook"
	"github.com/paygate/paygate/internal/webhook/outbound"
)

// The store must satisfy what the webhook domain asks of it.
var (
	_ webhook.DispatchStore = (*store.Store)(nil)
	_ webhook.DispatchTx    = (*store.Tx)(nil)
	_ webhook.LeaseTx       = (*store.Tx)(nil)
	_ webhook.EndpointStore = (*store.Store)(nil)
)

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// defaultWebhookTimeout is serve's --webhook-timeout
// (docs/design/decisions.md section 6: 15 s).
const defaultWebhookTimeout = outbound.DefaultTimeout

// webhooks: add, list, remove, rotate-secret (docs/design/decisions.md
// sections 6 and 10).
func webhooks(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db, asJSON, err := dbCommand("webhooks", "add, list, remove or rotate-secret", args, getenv, stderr)
	if err != nil {
		return err
	}
	key := fs.String("key", "", "access key (add: required; list: only its endpoints)")
	url := fs.String("url", "", "where events are POSTed (add)")
	types := fs.String("event-types", "", "comma-separated event types to receive, e.g. payment.succeeded,payment.declined; empty: all (add)")
	overlap := fs.Duration("overlap", 24*time.Hour, "how long the old secret keeps signing beside the new one (rotate-secret)")
	// Flags may come before or after the endpoint id.
	var pos []string
	for rest := args[1:]; ; {
		if err := fs.Parse(rest); err != nil {
			return usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		pos, rest = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	switch args[0] {
	case "add":
		if *key == "" || *url == "" || len(pos) > 0 {
			return usageError{"usage: paygate webhooks add --key ACCESS_KEY --url URL [--event-types a,b] [--json]"}
		}
	case "list":
		if len(pos) > 0 {
			return usageError{"usage: paygate webhooks list [--key ACCESS_KEY] [--json]"}
		}
	case "remove", "rotate-secret":
		if len(pos) != 1 {
			return usageError{fmt.Sprintf("usage: paygate webhooks %s ENDPOINT_ID", args[0])}
		}
		if *overlap < 0 {
			return usageError{"--overlap must not be negative"}
		}
	default:
		return usageError{fmt.Sprintf("unknown webhooks command %q", args[0])}
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
	svc := core.Webhooks
	switch args[0] {
	case "add":
		k, err := a.store.FindKeyByAccessKey(ctx, *key)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no key %s", *key)
		} else if err != nil {
			return err
		}
		var list []string
		for _, t := range strings.Split(*types, ",") {
			if t = strings.TrimSpace(t); t != "" {
				list = append(list, t)
			}
		}
		e, secret, err := svc.Create(ctx, a.store, k.ID, webhook.NewEndpoint{URL: *url, EventTypes: list})
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(map[string]any{"id": e.ID, "url": e.URL, "event_types": e.EventTypes, "secret": secret})
		}
		fmt.Fprintf(stdout, "endpoint  %s\nurl       %s\ntypes     %s\nsecret    %s\n\nThe secret is shown this once: verify each webhook's signature with it (docs/webhooks.md).\n",
			e.ID, e.URL, typesText(e.EventTypes), secret)
		return nil
	case "list":
		return listEndpoints(ctx, a, *key, *asJSON, stdout)
	}
	e, err := a.store.FindWebhookEndpoint(ctx, pos[0])
	if errors.Is(err, store.ErrNotFound) || err == nil && e.DeletedAt != nil || uuid.Validate(pos[0]) != nil {
		return fmt.Errorf("no webhook endpoint %s", pos[0])
	} else if err != nil {
		return err
	}
	if args[0] == "remove" {
		if err := a.store.RemoveWebhookEndpoint(ctx, e.AccessKeyID, e.ID, a.now()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s\n", e.ID)
		return nil
	}
	secret, err := svc.RotateSecret(ctx, a.store, e, *overlap)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"id": e.ID, "secret": secret, "previous_secret_until": e.PreviousSecretUntil})
	}
	fmt.Fprintf(stdout, "endpoint  %s\nsecret    %s\n\nThe new secret is shown this once.", e.ID, secret)
	if e.PreviousSecretUntil != nil {
		fmt.Fprintf(stdout, " The old one keeps signing beside it until %s.", e.PreviousSecretUntil.Format(time.RFC3339))
	}
	fmt.Fprintln(stdout)
	return nil
}

func typesText(types []string) string {
	if len(types) == 0 {
		return "all"
	}
	return strings.Join(types, ",")
}

type endpointRow struct {
	ID                  string     `json:"id"`
	AccessKey           string     `json:"access_key"`
	URL                 string     `json:"url"`
	EventTypes          []string   `json:"event_types"`
	CreatedAt           time.Time  `json:"created_at"`
	DisabledAt          *time.Time `json:"disabled_at"`
	DisabledReason      string     `json:"disabled_reason,omitempty"`
	PreviousSecretUntil *time.Time `json:"previous_secret_until"`
}

func listEndpoints(ctx context.Context, a *opened, accessKey string, asJSON bool, stdout io.Writer) error {
	keys, err := a.store.ListKeys(ctx)
	if err != nil {
		return err
	}
	access := map[string]string{}
	for _, k := range keys {
		access[k.ID] = k.AccessKey
	}
	var eps []*webhook.Endpoint
	if accessKey != "" {
		k, err := a.store.FindKeyByAccessKey(ctx, accessKey)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no key %s", accessKey)
		} else if err != nil {
			return err
		}
		eps, err = a.store.ListWebhookEndpoints(ctx, k.ID)
		if err != nil {
			return err
		}
	} else if eps, err = a.store.ListAllWebhookEndpoints(ctx); err != nil {
		return err
	}
	rows := []endpointRow{}
	now := a.now()
	for _, e := range eps {
		r := endpointRow{ID: e.ID, AccessKey: access[e.AccessKeyID], URL: e.URL, EventTypes: e.EventTypes,
			CreatedAt: e.CreatedAt, DisabledAt: e.DisabledAt, DisabledReason: e.DisabledReason}
		if e.Rotating(now) {
			r.PreviousSecretUntil = e.PreviousSecretUntil
		}
		rows = append(rows, r)
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACCESS KEY\tURL\tEVENT TYPES\tSTATUS\tCREATED")
	for _, r := range rows {
		status := "enabled"
		switch {
		case r.DisabledAt != nil:
			status = "disabled: " + r.DisabledReason
		case r.PreviousSecretUntil != nil:
			status = "enabled, old secret signs until " + r.PreviousSecretUntil.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.AccessKey, r.URL, typesText(r.EventTypes), status,
			r.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

// A deliver job reads its delivery, endpoint and event in one statement.
var _ webhook.SendReader = (*store.Store)(nil)
