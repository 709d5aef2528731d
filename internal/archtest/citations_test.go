package archtest

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Comments cite the rules they implement (docs/design/style.md), and a
// newcomer must be able to follow every citation inside the repository,
// never to the issue tracker. The forms, documented at the top of
// docs/design/decisions.md:
//
//   - a product decision: "docs/design/decisions.md section N" or
//     "docs/design/decisions.md sections N and M";
//   - an endpoint: its OpenAPI operationId, then its method and path, e.g.
//     "createDirectPayment (POST /payments/direct)";
//   - a body or answer: "OpenAPI schema" and its name, e.g. "OpenAPI
//     schema Payment";
//   - any other page: its path under docs/, which must exist.
//
// The older forms are refused: the word "decisions" followed by a number,
// an endpoint's number in a listing kept outside the repository (a hash
// sign and a number), a design page named without its docs/design/
// folder, and a number of the issue tracker (the word issue, then the
// number).

var (
	decisionsCite = regexp.MustCompile(`docs/design/decisions\.md sections? (\d+(?:(?:, | and |, and )\d+)*)`)
	oldDecisions  = regexp.MustCompile(`(?i)\bdecisions(?: sections?)? \d`)
	oldEndpoint   = regexp.MustCompile(`(?:^|[\s(,])#\d+\b`)
	issueCite     = regexp.MustCompile(`(?i)\bissues? #?\d+\b`)
	operationCite = regexp.MustCompile(`\b([a-z]+[A-Z][A-Za-z]*) \((GET|POST|PUT|PATCH|DELETE) (/[^\s),]*)\)`)
	schemaCite    = regexp.MustCompile(`OpenAPI schema ([A-Za-z]+)`)
	docCite       = regexp.MustCompile(`([\w./-]*)\b((?:style|dependencies|decisions|client-api)\.md)`)
	pageCite      = regexp.MustCompile(`\bdocs/[\w/.-]*\w\.md`)
	number        = regexp.MustCompile(`\d+`)
)

// contract is what citations may point at: the sections of
// docs/design/decisions.md, the OpenAPI document's operations ("GET
// /api/v1/payments/{id}" by operationId) and schemas, and whether a file
// exists.
type contract struct {
	sections   map[string]bool
	operations map[string]string
	schemas    map[string]bool
	exists     func(path string) bool
}

// check returns what is wrong with the citations in one comment's text.
func (c contract) check(text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	var bad []string
	for _, m := range oldDecisions.FindAllString(text, -1) {
		bad = append(bad, "old form "+strconvQuote(m)+": cite docs/design/decisions.md section N")
	}
	for _, m := range issueCite.FindAllString(text, -1) {
		bad = append(bad, strconvQuote(m)+" cites the issue tracker: cite the rule in docs/ instead")
	}
	for _, m := range oldEndpoint.FindAllString(text, -1) {
		bad = append(bad, "endpoint number "+strconvQuote(strings.TrimSpace(strings.TrimLeft(m, "(,")))+": cite the OpenAPI operationId (METHOD /path)")
	}
	for _, m := range decisionsCite.FindAllStringSubmatch(text, -1) {
		for _, n := range number.FindAllString(m[1], -1) {
			if !c.sections[n] {
				bad = append(bad, "docs/design/decisions.md has no section "+n)
			}
		}
	}
	for _, m := range operationCite.FindAllStringSubmatch(text, -1) {
		id, route := m[1], m[2]+" "+m[3]
		want, ok := c.operations[id]
		switch {
		case !ok:
			bad = append(bad, "the OpenAPI document has no operationId "+id)
		case want != route && want != m[2]+" /api/v1"+m[3]:
			bad = append(bad, id+" is "+want+", not "+route)
		}
	}
	for _, m := range schemaCite.FindAllStringSubmatch(text, -1) {
		if !c.schemas[m[1]] {
			bad = append(bad, "the OpenAPI document has no schema "+m[1])
		}
	}
	for _, m := range docCite.FindAllStringSubmatch(text, -1) {
		if m[2] == "client-api.md" || (m[1] != "docs/design/" && m[1] != "../../docs/design/") {
			bad = append(bad, strconvQuote(m[0])+" is outside the repository: cite docs/design/"+m[2])
		}
	}
	for _, p := range pageCite.FindAllString(text, -1) {
		if !c.exists(p) {
			bad = append(bad, p+" does not exist")
		}
	}
	return bad
}

func strconvQuote(s string) string { return `"` + s + `"` }

// TestCitationsResolve protects the citations of the comments of Go (test
// files alike) and SQL files (docs/design/style.md, "Habits": comments cite
// the spec rule they implement): each resolves inside the repository, in
// the forms above.
func TestCitationsResolve(t *testing.T) {
	root := moduleRoot(t)
	c := loadContract(t, root)
	if len(c.sections) < 15 || len(c.operations) < 23 || len(c.schemas) < 10 {
		t.Fatalf("read %d sections, %d operations, %d schemas: the readers are wrong", len(c.sections), len(c.operations), len(c.schemas))
	}
	cited := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		var comments []string
		switch {
		case strings.HasSuffix(name, ".go"):
			comments = goComments(t, path)
		case strings.HasSuffix(name, ".sql"):
			comments = sqlComments(t, path)
		default:
			return nil
		}
		for _, text := range comments {
			cited += len(decisionsCite.FindAllString(strings.Join(strings.Fields(text), " "), -1))
			for _, problem := range c.check(text) {
				t.Errorf("%s: %s", filepath.ToSlash(rel), problem)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 100 {
		t.Errorf("found %d citations of docs/design/decisions.md: the walk is wrong", cited)
	}
}

// TestCitationChecksCatch checks the checker on made-up comments, so a
// pattern that matches nothing cannot pass silently.
func TestCitationChecksCatch(t *testing.T) {
	c := contract{
		sections:   map[string]bool{"1": true, "4": true},
		operations: map[string]string{"getPayment": "GET /api/v1/payments/{id}"},
		schemas:    map[string]bool{"Payment": true},
		exists:     func(p string) bool { return p == "docs/api.md" || p == "docs/design/decisions.md" },
	}
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"fine (docs/design/decisions.md\nsection 4), see docs/api.md and #fragment", nil},
		{"getPayment (GET /payments/{id}) answers the OpenAPI schema Payment", nil},
		{"(docs/design/decisions.md sections 1 and 4)", nil},
		{"(decisions 4)", []string{`old form "decisions 4": cite docs/design/decisions.md section N`}},
		{"Decisions section\n1 says", []string{`old form "Decisions section 1": cite docs/design/decisions.md section N`}},
		{"docs/design/decisions.md sections 1, 4 and 16", []string{"docs/design/decisions.md has no section 16"}},
		{"is #5 GET /payments/{id}", []string{`endpoint number "#5": cite the OpenAPI operationId (METHOD /path)`}},
		{"(#8)", []string{`endpoint number "#8": cite the OpenAPI operationId (METHOD /path)`}},
		{"getPayments (GET /payments/{id})", []string{"the OpenAPI document has no operationId getPayments"}},
		{"getPayment (POST /payments/{id})", []string{"getPayment is GET /api/v1/payments/{id}, not POST /payments/{id}"}},
		{"OpenAPI schema Paymnet", []string{"the OpenAPI document has no schema Paymnet"}},
		{"(style.md: no globals)", []string{`"style.md" is outside the repository: cite docs/design/style.md`}},
		{"../spec/client-api.md", []string{`"../spec/client-api.md" is outside the repository: cite docs/design/client-api.md`}},
		{"docs/nope.md", []string{"docs/nope.md does not exist"}},
		{"refuses the sandbox acquirer (issue 3).", []string{`"issue 3" cites the issue tracker: cite the rule in docs/ instead`}},
		{"see Issues\n#12", []string{
			`"Issues #12" cites the issue tracker: cite the rule in docs/ instead`,
			`endpoint number "#12": cite the OpenAPI operationId (METHOD /path)`,
		}},
		{"an acquirer may issue 3DS challenges; a tissue 4 and issues raised", nil},
	} {
		if got := c.check(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("check(%q):\n got %q\nwant %q", tc.text, got, tc.want)
		}
	}
}

// loadContract reads the section headings of docs/design/decisions.md
// ("## N. Title") and the operations and schemas of the OpenAPI document.
// The document is read line by line at its fixed indentation: paths at two
// spaces, methods at four, operationId at six, schemas at four under
// "components:" / "  schemas:".
func loadContract(t *testing.T, root string) contract {
	t.Helper()
	c := contract{
		sections:   map[string]bool{},
		operations: map[string]string{},
		schemas:    map[string]bool{},
		exists: func(p string) bool {
			_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
			return err == nil
		},
	}
	heading := regexp.MustCompile(`^## (\d+)\. `)
	for _, line := range lines(t, filepath.Join(root, "docs", "design", "decisions.md")) {
		if m := heading.FindStringSubmatch(line); m != nil {
			c.sections[m[1]] = true
		}
	}
	var path, method, block string
	for _, line := range lines(t, filepath.Join(root, "internal", "openapi", "openapi.yaml")) {
		switch {
		case !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":"):
			block = strings.TrimSuffix(line, ":")
		case block == "paths" && strings.HasPrefix(line, "  /") && strings.HasSuffix(line, ":"):
			path = strings.TrimSuffix(strings.TrimSpace(line), ":")
		case block == "paths" && len(line) > 4 && line[:4] == "    " && line[4] != ' ' && strings.HasSuffix(line, ":"):
			method = strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(line), ":"))
		case strings.HasPrefix(line, "      operationId: "):
			c.operations[strings.TrimSpace(strings.TrimPrefix(line, "      operationId: "))] = method + " " + path
		case block == "components" && strings.HasPrefix(line, "  ") && line[2] != ' ':
			path = strings.TrimSuffix(strings.TrimSpace(line), ":") // the components' section
		case block == "components" && path == "schemas" && len(line) > 4 && line[:4] == "    " && line[4] != ' ' && strings.HasSuffix(line, ":"):
			c.schemas[strings.TrimSuffix(strings.TrimSpace(line), ":")] = true
		}
	}
	return c
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		out = append(out, s.Text())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// goComments returns the text of every comment group of a Go file.
func goComments(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cg := range f.Comments {
		out = append(out, cg.Text())
	}
	return out
}

// sqlComments returns each run of consecutive "--" lines of a SQL file,
// and each trailing "--" comment, as one text.
func sqlComments(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	var run []string
	flush := func() {
		if len(run) > 0 {
			out = append(out, strings.Join(run, "\n"))
			run = nil
		}
	}
	for _, line := range lines(t, path) {
		i := strings.Index(line, "--")
		if i < 0 {
			flush()
			continue
		}
		if strings.TrimSpace(line[:i]) != "" {
			flush()
			out = append(out, line[i+2:])
			continue
		}
		run = append(run, line[i+2:])
	}
	flush()
	return out
}
