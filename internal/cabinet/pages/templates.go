package pages

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"strings"
)

// style is the pages' one style sheet (cabinet.css), sent inline: the
// Content-Security-Policy allows it by its hash, and nothing else inline,
// so a page loads nothing but itself. It follows the checkout's look
// (internal/checkout/assets/checkout.css): its colours, type and controls.
//
//go:embed cabinet.css
var style string

// styleHash is style's CSP source: 'sha256-…'.
var styleHash = func() string {
	sum := sha256.Sum256([]byte(style))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

// tmpl holds the pages: small, readable on a phone, no script.
var tmpl = template.Must(template.New("").Funcs(template.FuncMap{"tone": tone, "resourcePath": resourcePath}).Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Paygate cabinet</title>
<style>{{.Style}}</style>
</head><body>{{end}}
{{define "foot"}}</main></body></html>{{end}}

{{define "brand"}}<a class="brand" href="/cabinet/{{.KeyParam}}"><span class="mark" aria-hidden="true">P</span><span>Paygate</span><span>cabinet</span></a>{{end}}

{{define "public"}}<header class="top"><div class="bar">{{template "brand" .}}</div></header>
<main class="narrow">{{end}}

{{define "status"}}<span class="badge {{tone .}}">{{.}}</span>{{end}}

{{define "message"}}{{template "head" .}}{{template "public" .}}<h1>{{.Title}}</h1><p>{{.Message}}</p>
<p><a href="/cabinet/sign-in">Sign in</a></p>{{template "foot" .}}{{end}}

{{define "sign-in"}}{{template "head" .}}{{template "public" .}}<h1>Sign in</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/cabinet/sign-in">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" value="{{.Email}}" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>{{template "foot" .}}{{end}}

{{define "setup"}}{{template "head" .}}{{template "public" .}}<h1>Choose a password</h1>
<p>For {{.Email}}. At least 12 characters.</p>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/cabinet/setup/{{.Token}}">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required>
<label for="password_again">Password again</label><input id="password_again" name="password_again" type="password" autocomplete="new-password" minlength="12" required>
<button type="submit">Set password and sign in</button></form>{{template "foot" .}}{{end}}

{{define "home"}}{{template "head" .}}{{template "nav" .}}
<h1>Your keys</h1>
{{if .Keys}}<div class="scroll"><table><thead><tr><th>Name</th><th>Access key</th><th>Environment</th></tr></thead><tbody>
{{range .Keys}}<tr><td><a href="/cabinet/payments?key={{.ID}}">{{.Name}}</a></td><td><code>{{.AccessKey}}</code></td><td>{{.Environment}}</td></tr>{{end}}
</tbody></table></div>{{else}}<p>No key has been granted to you yet.</p>{{end}}
{{template "foot" .}}{{end}}
`))

// tone is a status badge's colour class: done well, waiting, gone wrong,
// money given back; others (canceled, expired) stay grey.
func tone(status any) string {
	switch fmt.Sprint(status) {
	case "succeeded", "verified", "active", "enabled":
		return "ok"
	case "processing", "pending", "inquiring", "requires_action", "code_sent", "authorized",
		"incomplete", "past_due", "paused", "manual_review":
		return "warn"
	case "declined", "failed", "disabled", "authentication_failed":
		return "bad"
	case "refunded", "partially_refunded":
		return "info"
	}
	return ""
}

// resourceLists are the cabinet's lists by an event's resource type; a
// mandate has no page.
var resourceLists = map[string]string{"payment": "payments", "subscription": "subscriptions",
	"payout": "payouts", "card_verification": "verifications"}

// resourcePath is the cabinet page of an event's resource (its
// ResourceType and id), or "" for a resource without one.
func resourcePath(resourceType, id string) string {
	list, ok := resourceLists[resourceType]
	if !ok || id == "" {
		return ""
	}
	return "/cabinet/" + list + "/" + id
}

// section is a part of the cabinet in the navigation; the pages whose
// title starts with one of its prefixes are in it.
type section struct {
	path, label string
	prefixes    []string
}

var sections = []section{
	{"/cabinet/payments", "Payments", []string{"Payment", "Totals", "Export"}},
	{"/cabinet/cards", "Saved cards", []string{"Saved cards"}},
	{"/cabinet/verifications", "Verifications", []string{"Verification"}},
	{"/cabinet/payouts", "Payouts", []string{"Payout"}},
	{"/cabinet/subscriptions", "Subscriptions", []string{"Subscription"}},
	{"/cabinet/webhooks", "Webhooks", []string{"Webhook"}},
	{"/cabinet/events", "Events", []string{"Event"}},
	{"/cabinet/allowances", "Allowances", []string{"Allowances"}},
	{"/cabinet/channels", "Channels", []string{"Channels"}},
	{"/cabinet/reconciliation", "Reconciliation", []string{"Reconciliation"}},
}

// navLink is one link of the navigation; Current marks the page's section.
type navLink struct {
	Path, Label string
	Current     bool
}

// Nav is the navigation of the page, its section marked.
func (v view) Nav() []navLink {
	out := make([]navLink, len(sections))
	for i, s := range sections {
		out[i] = navLink{Path: s.path, Label: s.label}
		for _, p := range s.prefixes {
			if strings.HasPrefix(v.Title, p) {
				out[i].Current = true
			}
		}
	}
	return out
}
