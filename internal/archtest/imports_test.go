// Package archtest holds tests of the code's shape rather than its
// behaviour: which package may import what.
package archtest

import (
	"bufio"
	"errors"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The dependency direction of docs/design/style.md ("The shape we want"): cmd
// wires everything; server knows services, not SQL; domain packages import
// neither net/http nor database/sql; provider adapters know nothing of the
// store or the server. Paths are relative to the module; a rule naming "x"
// also covers "x/...".

// edge lists the packages that speak HTTP by design. Every other package
// under internal/ that is not in persistence is a domain package, so a new
// sibling (verification, payout, subscription, savedcard, operation, ...)
// gets the domain rules without being listed.
var edge = []string{
	"internal/server",           // routes, handlers, middleware
	"internal/checkout",         // the payer's checkout pages (docs/design/decisions.md section 9)
	"internal/cabinet/pages",    // the merchant cabinet's pages (docs/design/decisions.md section 13)
	"internal/forwarded",        // the trusted proxy's X-Forwarded-* headers
	"internal/client",           // the signed Go client of Paygate's API
	"internal/openapi",          // the HTTP contract and its wire types
	"internal/webhook/outbound", // delivers webhooks over HTTP; internal/webhook only declares the sender it needs
	"internal/provider/",        // adapters (the seam internal/provider itself is domain): an acquirer is reached over HTTP
}

// serverSide are the edge packages that serve Paygate's own HTTP: they use
// the store's methods (services), never SQL.
var serverSide = []string{"internal/server", "internal/checkout"}

// persistence lists the packages that hold SQL or the queue's database
// wiring.
var persistence = []string{
	"internal/store", // SQL for both databases, storetest, and dbconn (its connections)
	"internal/jobs",  // River's drivers take the *sql.DB
}

// storeAdapters fit the store's methods to the interfaces an edge package
// declares: the cabinet pages' data (docs/architecture.md, "Packages").
// They call the store, never SQL, and serve no HTTP; the composition root
// builds them and hands them to the edge, so nothing else imports them.
var storeAdapters = []string{
	"internal/cabinet/data", // pages.Data over the store and the domain services (docs/cabinet.md)
}

// resources are the siblings that call providers on the operation engine
// (docs/architecture.md, "Adding a resource that calls a provider"). What
// they share is a package of its own, never one of theirs.
var resources = []string{"internal/payment", "internal/payout", "internal/verification"}

// root is the composition root (internal/app): like cmd it wires
// everything, so it, and its tests' rig (internal/app/apptest), are
// neither domain packages nor edges.
const compositionRoot = "internal/app"

// drivers are the database drivers: only the store registers and reads them
// (store/dbconn connects through them; store/errors.go is the one place
// their errors are translated).
var drivers = []string{"github.com/jackc/pgx", "modernc.org/sqlite"}

// rule forbids the packages it applies to to import any of forbid.
type rule struct {
	name    string
	applies func(pkg string) bool
	forbid  []string
}

var rules = []rule{
	{
		name:    "domain packages import neither net/http nor database/sql",
		applies: func(p string) bool { return domain(p) },
		forbid:  []string{"net/http", "database/sql", "internal/store", "internal/server", "internal/jobs"},
	},
	{
		name:    "server knows services, not SQL",
		applies: func(p string) bool { return inAny(p, serverSide) },
		forbid:  []string{"database/sql"},
	},
	{
		name:    "provider adapters know nothing of the store or the server",
		applies: func(p string) bool { return under(p, "internal/provider") },
		forbid:  []string{"internal/store", "internal/server", "internal/jobs", "database/sql"},
	},
	{
		name: "HTTP packages other than the server do not reach into it or the store",
		applies: func(p string) bool {
			return inAny(p, edge) && !inAny(p, serverSide) && !under(p, "internal/provider")
		},
		forbid: []string{"internal/server", "internal/store", "database/sql"},
	},
	{
		name:    "store adapters call the store's methods: no SQL, no HTTP, not the server",
		applies: func(p string) bool { return inAny(p, storeAdapters) },
		forbid:  []string{"database/sql", "net/http", "internal/server", "internal/jobs"},
	},
	{
		name:    "only the composition root imports the store adapters",
		applies: func(p string) bool { return p != compositionRoot && !under(p, "cmd") && !inAny(p, storeAdapters) },
		forbid:  storeAdapters,
	},
	{
		name:    "the store does not serve HTTP",
		applies: func(p string) bool { return inAny(p, persistence) },
		forbid:  []string{"net/http", "internal/server"},
	},
	{
		name:    "only the store knows the database drivers",
		applies: func(p string) bool { return strings.HasPrefix(p, "internal/") && !under(p, "internal/store") },
		forbid:  drivers,
	},
	{
		name:    "the store's connections know no table: dbconn imports no Paygate package",
		applies: func(p string) bool { return under(p, "internal/store/dbconn") },
		forbid:  []string{"internal/"},
	},
	{
		name:    "a resource does not import a sibling's package: the instrument vocabulary is internal/instrument",
		applies: func(p string) bool { return slices.Contains(resources, p) },
		forbid:  resources,
	},
	{
		name:    "only tests import the domain tests' rig",
		applies: func(p string) bool { return p != testRig },
		forbid:  []string{testRig},
	},
}

// testRig is the domain tests' rig: a package so that every domain's tests
// share it, imported by test files only.
const testRig = "internal/app/apptest"

// exception is an import that breaks a rule today, kept visible here until
// it is moved. The test fails when an exception is no longer needed, so the
// list only shrinks.
type exception struct{ pkg, imp, why string }

var exceptions = []exception{}

func TestDependencyDirection(t *testing.T) {
	root := moduleRoot(t)
	pkgs := packages(t, root)
	if len(pkgs) < 10 || pkgs["internal/store"] == nil {
		t.Fatalf("found %d packages under %s: the walk is wrong", len(pkgs), root)
	}
	got, unused := violations(pkgs, exceptions)
	for _, v := range got {
		t.Error(v)
	}
	for _, e := range unused {
		t.Errorf("exception %s → %s is no longer needed: remove it from archtest", e.pkg, e.imp)
	}
}

// TestRulesCatch checks the checker itself on made-up packages, so a rule
// table that matches nothing cannot pass silently.
func TestRulesCatch(t *testing.T) {
	pkgs := map[string][]string{
		"internal/verification":     {"context", "net/http"},                                                    // a new domain sibling
		"internal/payment":          {"database/sql/driver"},                                                    // a subpackage of database/sql
		"internal/provider/acme":    {"net/http", "internal/store"},                                             // adapter reaching the store
		"internal/server":           {"net/http", "modernc.org/sqlite", "internal/cabinet/data"},                // server reaching a driver, an adapter
		"internal/cabinet/data":     {"internal/store", "internal/cabinet/pages", "net/http"},                   // a store adapter serving HTTP
		"internal/webhook/outbound": {"net/http"},                                                               // allowed: edge
		"internal/money":            {"strconv", "github.com/bojanz/currency"},                                  // allowed
		"internal/store":            {"database/sql", "github.com/jackc/pgx/v5/pgconn"},                         // allowed
		"cmd/paygate":               {"net/http", "database/sql", "modernc.org/sqlite"},                         // cmd wires everything
		"internal/app":              {"net/http", "internal/store", "internal/server", "internal/cabinet/data"}, // so does the composition root
		"internal/store/storetest":  {"database/sql", "internal/payment"},                                       // allowed
		"internal/store/dbconn":     {"database/sql/driver", "modernc.org/sqlite"},                              // allowed: the store's connections
		"internal/store/dbconn/x":   {"internal/store", "internal/payment"},                                     // connections reaching the SQL
		"internal/payout":           {"internal/money", "internal/payment"},                                     // a resource reaching a sibling
		"internal/subscription":     {"internal/payment"},                                                       // allowed: a charge is a payment
		"internal/app/apptest":      {"net/http", "internal/store", "internal/app"},                             // allowed: the root's test rig
		"internal/cabinet":          {"internal/app/apptest"},                                                   // the test rig outside a test
	}
	got, unused := violations(pkgs, []exception{{"internal/money", "net/http", "stale"}})
	want := []string{
		"internal/cabinet imports internal/app/apptest: only tests import the domain tests' rig",
		"internal/cabinet/data imports net/http: store adapters call the store's methods: no SQL, no HTTP, not the server",
		"internal/payment imports database/sql/driver: domain packages import neither net/http nor database/sql",
		"internal/payout imports internal/payment: a resource does not import a sibling's package: the instrument vocabulary is internal/instrument",
		"internal/provider/acme imports internal/store: provider adapters know nothing of the store or the server",
		"internal/server imports internal/cabinet/data: only the composition root imports the store adapters",
		"internal/server imports modernc.org/sqlite: only the store knows the database drivers",
		"internal/store/dbconn/x imports internal/payment: the store's connections know no table: dbconn imports no Paygate package",
		"internal/store/dbconn/x imports internal/store: the store's connections know no table: dbconn imports no Paygate package",
		"internal/verification imports net/http: domain packages import neither net/http nor database/sql",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
	if len(unused) != 1 || unused[0].pkg != "internal/money" {
		t.Errorf("unused exceptions = %v, want the stale one", unused)
	}
}

// violations returns one line per forbidden import (sorted) and the
// exceptions that excused nothing. pkgs maps a package path (relative to
// the module, imports of the module's own packages likewise) to the
// imports of its non-test files.
func violations(pkgs map[string][]string, excused []exception) (found []string, unused []exception) {
	used := make([]bool, len(excused))
	for pkg, imps := range pkgs {
		for _, r := range rules {
			if !r.applies(pkg) {
				continue
			}
			for _, imp := range imps {
				if !inAny(imp, r.forbid) {
					continue
				}
				i := slices.IndexFunc(excused, func(e exception) bool { return e.pkg == pkg && e.imp == imp })
				if i >= 0 {
					used[i] = true
					continue
				}
				found = append(found, pkg+" imports "+imp+": "+r.name)
			}
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	for i, e := range excused {
		if !used[i] {
			unused = append(unused, e)
		}
	}
	return found, unused
}

// domain: a package under internal/ that is neither HTTP, persistence, a
// store adapter nor the composition root's.
func domain(p string) bool {
	return strings.HasPrefix(p, "internal/") && !inAny(p, edge) && !inAny(p, persistence) && !inAny(p, storeAdapters) &&
		!under(p, compositionRoot)
}

// under reports whether p is prefix or inside it; a prefix ending in "/"
// covers only what is inside.
func under(p, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(p, prefix)
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

func inAny(p string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(prefix string) bool { return under(p, prefix) })
}

// moduleRoot is the folder of go.mod, two levels up from this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// packages reads the imports of every package's non-test files (for this
// platform's build tags), with the module's own prefix removed.
func packages(t *testing.T, root string) map[string][]string {
	t.Helper()
	module := modulePath(t, root)
	pkgs := map[string][]string{}
	eachPackage(t, root, func(rel string, bp *build.Package) {
		imps := make([]string, 0, len(bp.Imports))
		for _, imp := range bp.Imports {
			imps = append(imps, strings.TrimPrefix(imp, module+"/"))
		}
		pkgs[rel] = imps
	})
	return pkgs
}

// eachPackage calls fn with the path (relative to root) and the build
// information of every package under root, for this platform's build tags.
func eachPackage(t *testing.T, root string, fn func(rel string, bp *build.Package)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		bp, err := build.Default.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), bp)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// parseGo parses the non-test files of a package, by file name.
func parseGo(t *testing.T, fset *token.FileSet, bp *build.Package) map[string]*ast.File {
	t.Helper()
	files := map[string]*ast.File{}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(bp.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	return files
}

func modulePath(t *testing.T, root string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m, ok := strings.CutPrefix(s.Text(), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}
