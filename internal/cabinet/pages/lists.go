package pages

import (
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/merchant"
)

// Every list pages the same way: newest first, keyset pages of pageSize,
// "?after=<unixmicro>_<id>" naming the last row of the previous page
// (docs/cabinet.md, Payments).

// keysetAfter reads a list's "after" parameter; ok false: it is not one
// a list wrote. "" is the first page.
func keysetAfter(s string) (*time.Time, string, bool) {
	if s == "" {
		return nil, "", true
	}
	micros, id, ok := strings.Cut(s, "_")
	n, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil || id == "" || len(id) > maxID || !storable(id) {
		return nil, "", false
	}
	t := time.UnixMicro(n).UTC()
	return &t, id, true
}

// keysetLinks are a list's "Newest" link (when not on the first page) and
// its "Older" link (when more rows follow the page's last).
func keysetLinks(path string, link url.Values, paged, more bool, lastCreated time.Time, lastID string) (first, next string) {
	if paged {
		first = path + "?" + link.Encode()
	}
	if more {
		link.Set("after", afterValue(lastCreated, lastID))
		next = path + "?" + link.Encode()
	}
	return first, next
}

// listLink is the query that keeps a list's key and filters (pairs of
// name and value; empty values are left out).
func listLink(v view, pairs ...string) url.Values {
	link := url.Values{}
	if len(v.Keys) > 1 {
		link.Set("key", v.Key.ID)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			link.Set(pairs[i], pairs[i+1])
		}
	}
	return link
}

func (pg *Pages) badLink(w http.ResponseWriter) {
	pg.render(w, http.StatusBadRequest, "message", view{Title: "Bad link", Message: "This page link is not valid."})
}

func utcMinute(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

// storable reports whether s can reach the database as text: PostgreSQL
// refuses invalid UTF-8 and NUL (SQLSTATE 22021), which would otherwise be
// a 500 page.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// maxID bounds an id read from a path or a link; every resource id is
// shorter.
const maxID = 64

// pathID is the path's {id} when it could name a resource, else "", which
// every store lookup answers as missing: a 404 page, as for an unknown id.
func pathID(r *http.Request) string {
	id := r.PathValue("id")
	if len(id) > maxID || !storable(id) {
		return ""
	}
	return id
}

// keyOffset is how far the key's clock runs ahead of real time: its
// sandbox clock's offset, zero in production (docs/design/decisions.md
// section 14).
func keyOffset(k merchant.Key) time.Duration {
	if k.Environment != merchant.Sandbox {
		return 0
	}
	return k.ClockOffset
}

// afterValue is the "after" of a page whose last row is (t, id).
func afterValue(t time.Time, id string) string {
	return strconv.FormatInt(t.UnixMicro(), 10) + "_" + id
}

// scopeOf is scope for the page of one resource of keyID: a resource of a
// key not granted to u is as unknown as a missing one, a 404 page saying
// missing (docs/design/decisions.md section 13), and the view shows the
// resource's key whatever ?key= says. ok false: the answer was written.
func (pg *Pages) scopeOf(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf, title, keyID, missing string) (view, bool) {
	if !owns(u, keyID) {
		pg.notFound(w, missing)
		return view{}, false
	}
	base, ok := pg.scope(w, r, u, csrf, title)
	if !ok {
		return view{}, false
	}
	i := slices.IndexFunc(base.Keys, func(k merchant.Key) bool { return k.ID == keyID })
	if i < 0 { // the grant was taken away since the session was read
		pg.notFound(w, missing)
		return view{}, false
	}
	base.Key = base.Keys[i]
	return base, true
}

var _ = template.Must(tmpl.Parse(`
{{define "key-field"}}{{if gt (len .Keys) 1}}<div><label for="key">Key</label><select id="key" name="key">
{{range .Keys}}<option value="{{.ID}}"{{if eq .ID $.Key.ID}} selected{{end}}>{{.Name}} ({{.Environment}})</option>{{end}}
</select></div>{{end}}{{end}}
`))
