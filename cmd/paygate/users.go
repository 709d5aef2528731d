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

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/store"
)

// users: create, list, disable, grant, setup-link: the merchant cabinet's
// users (docs/design/decisions.md section 13; docs/cabinet.md, Users and
// sign-in).
func users(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db, asJSON, err := dbCommand("users", "create, list, disable, grant or setup-link", args, getenv, stderr)
	if err != nil {
		return err
	}
	email := fs.String("email", "", "the user's email")
	role := fs.String("role", string(cabinet.Viewer), "admin or viewer (create)")
	publicURL := fs.String("public-url", getenv("PAYGATE_PUBLIC_URL"), "base of the setup link; default http://127.0.0.1:8080 (PAYGATE_PUBLIC_URL)")
	var keys stringList
	fs.Var(&keys, "key", "an access key the user sees (create: one or more; grant: one)")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err.Error()}
	}
	cmd := args[0]
	switch cmd {
	case "create", "disable", "grant", "setup-link":
		if *email == "" {
			return usageError{"users " + cmd + " needs --email"}
		}
	case "list":
	default:
		return usageError{fmt.Sprintf("unknown users command %q", cmd)}
	}
	if (cmd == "create" && len(keys) == 0) || (cmd == "grant" && len(keys) != 1) {
		return usageError{"users " + cmd + " needs --key ACCESS_KEY"}
	}
	if cmd == "create" && !cabinet.Role(*role).Known() {
		return usageError{"--role must be admin or viewer"}
	}
	if *publicURL == "" {
		*publicURL = "http://127.0.0.1:8080"
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
	svc := core.Cabinet
	keyIDs := make([]string, 0, len(keys))
	for _, ak := range keys {
		k, err := a.store.FindKeyByAccessKey(ctx, ak)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no key %s", ak)
		} else if err != nil {
			return err
		}
		keyIDs = append(keyIDs, k.ID)
	}
	link := func(token string) string {
		return strings.TrimRight(*publicURL, "/") + "/cabinet/setup/" + token
	}
	printLink := func(u, token string) error {
		if *asJSON {
			return json.NewEncoder(stdout).Encode(map[string]string{"email": u, "setup_link": link(token)})
		}
		fmt.Fprintf(stdout, "user        %s\nsetup link  %s\n\nThe link works once, for %s.\n", u, link(token), cabinet.SetupLifetime)
		return nil
	}
	switch cmd {
	case "create":
		u, token, err := svc.CreateUser(ctx, *email, cabinet.Role(*role), keyIDs)
		if err != nil {
			return err
		}
		return printLink(u.Email, token)
	case "setup-link":
		token, err := svc.NewSetupLink(ctx, *email)
		if err != nil {
			return err
		}
		return printLink(cabinet.NormalizeEmail(*email), token)
	case "disable":
		if err := svc.Disable(ctx, *email); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "disabled %s; their sessions have ended\n", cabinet.NormalizeEmail(*email))
		return nil
	case "grant":
		if err := svc.Grant(ctx, *email, keyIDs[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s now sees %s\n", cabinet.NormalizeEmail(*email), keys[0])
		return nil
	}
	return listUsers(ctx, a, svc, stdout, *asJSON)
}

// userRow is one user as `users list` prints it.
type userRow struct {
	Email       string     `json:"email"`
	Role        string     `json:"role"`
	AccessKeys  []string   `json:"access_keys"`
	PasswordSet bool       `json:"password_set"`
	CreatedAt   time.Time  `json:"created_at"`
	DisabledAt  *time.Time `json:"disabled_at"`
}

func listUsers(ctx context.Context, a *opened, svc *cabinet.Service, w io.Writer, asJSON bool) error {
	us, err := svc.Users(ctx)
	if err != nil {
		return err
	}
	ks, err := a.store.ListKeys(ctx)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, k := range ks {
		names[k.ID] = k.AccessKey
	}
	rows := []userRow{}
	for _, u := range us {
		r := userRow{Email: u.Email, Role: string(u.Role), AccessKeys: []string{}, PasswordSet: u.PasswordHash != "",
			CreatedAt: u.CreatedAt, DisabledAt: u.DisabledAt}
		for _, id := range u.KeyIDs {
			r.AccessKeys = append(r.AccessKeys, names[id])
		}
		rows = append(rows, r)
	}
	if asJSON {
		return json.NewEncoder(w).Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EMAIL\tROLE\tACCESS KEYS\tCREATED\tSTATUS")
	for _, r := range rows {
		status := "active"
		if !r.PasswordSet {
			status = "setup pending"
		}
		if r.DisabledAt != nil {
			status = "disabled " + r.DisabledAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Email, r.Role, strings.Join(r.AccessKeys, ","),
			r.CreatedAt.Format(time.RFC3339), status)
	}
	return tw.Flush()
}

// stringList is a flag that may be given several times.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	*l = append(*l, s)
	return nil
}
