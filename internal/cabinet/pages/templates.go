package pages

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
)

// style is the pages' one inline stylesheet; the Content-Security-Policy
// allows it by its hash, and nothing else inline.
const style = `body{font:16px/1.5 system-ui,sans-serif;max-width:72rem;margin:1.5rem auto;padding:0 1rem;color:#1a1a1a}
label{display:block;margin:.75rem 0 .25rem}input{font:inherit;padding:.5rem;width:100%;box-sizing:border-box}
button{font:inherit;padding:.5rem 1rem;margin-top:1rem}.error{color:#a40000}table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd}header{display:flex;justify-content:space-between;align-items:center}
header form button{margin-top:0}.scroll{overflow-x:auto}.num{text-align:right;white-space:nowrap}select{font:inherit;padding:.5rem;width:100%}
svg.chart{display:block;width:100%;height:8rem;margin-top:1rem}figure{margin:1rem 0}figcaption{font-size:.9rem}dt{font-weight:600}dd{margin:0 0 .5rem}
nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:.75rem 0}form.inline{display:inline}form.inline button{margin-top:0;padding:.25rem .75rem}
form.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(9rem,1fr));gap:0 1rem;align-items:end}
form.filters label{margin-top:.5rem}form.filters .actions{display:flex;gap:1rem;align-items:center}
.dot{white-space:nowrap;margin-right:.75rem}pre{background:#f6f6f6;padding:.75rem;max-height:28rem;overflow:auto}form.narrow{max-width:28rem}`

// styleHash is style's CSP source: 'sha256-…'.
var styleHash = func() string {
	sum := sha256.Sum256([]byte(style))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

// tmpl holds the pages: small, readable on a phone, no script.
var tmpl = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Paygate cabinet</title>
<style>{{.Style}}</style>
</head><body>{{end}}
{{define "foot"}}</body></html>{{end}}

{{define "message"}}{{template "head" .}}<h1>{{.Title}}</h1><p>{{.Message}}</p>
<p><a href="/cabinet/sign-in">Sign in</a></p>{{template "foot" .}}{{end}}

{{define "sign-in"}}{{template "head" .}}<h1>Sign in</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/cabinet/sign-in" class="narrow">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" value="{{.Email}}" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>{{template "foot" .}}{{end}}

{{define "setup"}}{{template "head" .}}<h1>Choose a password</h1>
<p>For {{.Email}}. At least 12 characters.</p>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/cabinet/setup/{{.Token}}" class="narrow">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required>
<label for="password_again">Password again</label><input id="password_again" name="password_again" type="password" autocomplete="new-password" minlength="12" required>
<button type="submit">Set password and sign in</button></form>{{template "foot" .}}{{end}}

{{define "home"}}{{template "head" .}}{{template "nav" .}}
<h1>Your keys</h1>
{{if .Keys}}<table><thead><tr><th>Name</th><th>Access key</th><th>Environment</th></tr></thead><tbody>
{{range .Keys}}<tr><td><a href="/cabinet/payments?key={{.ID}}">{{.Name}}</a></td><td><code>{{.AccessKey}}</code></td><td>{{.Environment}}</td></tr>{{end}}
</tbody></table>{{else}}<p>No key has been granted to you yet.</p>{{end}}
{{template "foot" .}}{{end}}
`))
