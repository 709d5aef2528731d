package archtest

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// pipelineCalls are the store's methods the HTTP layer calls itself: the
// transactions of its write pipeline, the requests' idempotency records,
// nonces and rate admission, the access-key lookup of authentication and
// health's ping (server.Store). Every resource is read and changed through
// its domain service: "server knows services, not SQL" (docs/design/style.md;
// docs/architecture.md, "Packages").
var pipelineCalls = []string{
	"Batch", "InTx", "Savepoint", "RollbackTo",
	"Admit", "LockIdempotencyKey", "FindIdempotentResponse", "SaveIdempotentResponse", "UpdateIdempotentResponse",
	"FindKeyByAccessKey", "Ping",
}

// storeTypes are the store's types whose methods are its statements.
var storeTypes = []string{"Store", "Tx", "Queries"}

// TestHandlersCallServices keeps the store's statements out of the
// handlers of internal/server and internal/checkout (non-test files): they
// call the store and its transactions for pipelineCalls only, and a domain
// service for anything else. A heuristic on syntax, without types
// (golang.org/x/tools is not a dependency): it sees a method or field taken
// of an identifier declared with one of storeTypes (a parameter, a result
// or a variable: tx *store.Tx, q store.Queries) in the same function, or
// of a field named store (s.store, pg.store); a store value reached
// another way (a function's result, a copy declared without its type)
// passes unseen.
func TestHandlersCallServices(t *testing.T) {
	root := moduleRoot(t)
	module := modulePath(t, root)
	fset := token.NewFileSet()
	var seen []string
	for _, pkg := range serverSide {
		bp, err := build.Default.ImportDir(filepath.Join(root, filepath.FromSlash(pkg)), 0)
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range parseGo(t, fset, bp) {
			calls := storeCalls(fset, f, module)
			for _, c := range calls {
				seen = append(seen, c.what)
				if !c.allowed {
					t.Errorf("%s/%s:%d: %s: the HTTP layer calls a domain service for a resource, the store only for its pipeline (server.Store)",
						pkg, name, c.line, c.what)
				}
			}
		}
	}
	for _, must := range []string{"s.store.Batch", "tx.LockIdempotencyKey", "pg.store.InTx"} {
		if !slices.Contains(seen, must) {
			t.Errorf("%s was not seen: the checker is wrong", must)
		}
	}
}

// TestHandlersCallServicesCatch checks the checker on a made-up file, so a
// pattern that matches nothing cannot pass silently.
func TestHandlersCallServicesCatch(t *testing.T) {
	const src = `package web

import st "github.com/paygate/paygate/internal/store"

type pages struct{ store Store }

func (s *Server) a(ctx context.Context, tx *st.Tx, q url.Values) {
	tx.LockPaymentForKey(ctx, "k", "p")
	tx.Savepoint(ctx, "request")
	s.store.FindPaymentForKey(ctx, "k", "p")
	s.store.Batch(ctx, nil)
	find := tx.FindSessionByID
	s.payments.FindForKey(ctx, "k", "p")
	q.Get("status")
}

func b(ctx context.Context, q st.Queries, db *st.Store) {
	q.ListEvents(ctx, "k", f)
	db.Ping(ctx)
	db.Queries.ListPayments(ctx, "k", f)
}

var c = func(x *st.Tx) error { return x.CreatePayment(nil, nil) }

func (pg *pages) d(ctx context.Context) {
	pg.store.FindSessionByID(ctx, "s")
	var other store.Tx // another package's store
	other.Enqueue(ctx, nil, nil)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "web.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range storeCalls(fset, f, "github.com/paygate/paygate") {
		if !c.allowed {
			got = append(got, fmt.Sprintf("%d: %s", c.line, c.what))
		}
	}
	want := []string{
		"8: tx.LockPaymentForKey",
		"10: s.store.FindPaymentForKey",
		"12: tx.FindSessionByID",
		"18: q.ListEvents",
		"20: db.Queries",
		"23: x.CreatePayment",
		"26: pg.store.FindSessionByID",
	}
	if !slices.Equal(got, want) {
		t.Errorf("storeCalls:\n got %q\nwant %q", got, want)
	}
}

// storeCall is a method or field taken of the store in a file.
type storeCall struct {
	line    int
	what    string // "tx.LockPaymentForKey", "s.store.Batch"
	allowed bool   // one of pipelineCalls
}

// storeCalls returns, in order, the methods and fields f takes of a value
// of the store: an identifier declared with one of storeTypes (of the
// package internal/store, by the name f imports it under) in the same
// top-level declaration or by a package-level variable, or a field named
// store.
func storeCalls(fset *token.FileSet, f *ast.File, module string) []storeCall {
	storePkg := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"/internal/store" {
			storePkg = "store"
			if imp.Name != nil {
				storePkg = imp.Name.Name
			}
		}
	}
	isStoreType := func(e ast.Expr) bool {
		if star, ok := e.(*ast.StarExpr); ok {
			e = star.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && storePkg != "" && id.Name == storePkg && slices.Contains(storeTypes, sel.Sel.Name)
	}
	// declared are the names a node declares with a store type.
	declared := func(root ast.Node) map[string]bool {
		names := map[string]bool{}
		ast.Inspect(root, func(n ast.Node) bool {
			var ids []*ast.Ident
			switch n := n.(type) {
			case *ast.Field:
				if isStoreType(n.Type) {
					ids = n.Names
				}
			case *ast.ValueSpec:
				if n.Type != nil && isStoreType(n.Type) {
					ids = n.Names
				}
			}
			for _, id := range ids {
				names[id.Name] = true
			}
			return true
		})
		return names
	}
	// A name counts in the top-level declaration that declares it (a
	// function and its closures), or everywhere when a package-level
	// variable declares it.
	global := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, spec := range g.Specs {
				if v := spec.(*ast.ValueSpec); v.Type != nil && isStoreType(v.Type) {
					for _, id := range v.Names {
						global[id.Name] = true
					}
				}
			}
		}
	}

	var out []storeCall
	for _, d := range f.Decls {
		local := declared(d)
		ast.Inspect(d, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			var of string
			switch x := sel.X.(type) {
			case *ast.Ident:
				if local[x.Name] || global[x.Name] {
					of = x.Name
				}
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && x.Sel.Name == "store" {
					of = id.Name + ".store"
				}
			}
			if of != "" {
				out = append(out, storeCall{line: fset.Position(sel.Pos()).Line, what: of + "." + sel.Sel.Name,
					allowed: slices.Contains(pipelineCalls, sel.Sel.Name)})
			}
			return true
		})
	}
	return out
}
