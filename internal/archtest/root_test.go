package archtest

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// built lists, by package, the services and engines that only the
// composition root builds; the constructor of T is NewT.
var built = map[string][]string{
	"internal/payment":      {"Service", "Engine"},
	"internal/payout":       {"Service", "Engine"},
	"internal/verification": {"Service", "Engine"},
	"internal/subscription": {"Service"},
	"internal/operation":    {"Engine"},
	"internal/webhook":      {"Service"},
	"internal/allowance":    {"Service"},
	"internal/savedcard":    {"Service"},
}

// TestOnlyTheRootBuilds protects the composition root
// (docs/architecture.md, "The composition root"; docs/design/style.md,
// "Wire once"): outside internal/app, no non-test file uses a constructor
// of built or writes a literal (or new) of its types, so the graph is wired
// once and cmd/paygate and bench start Paygate through internal/app. A
// package never names itself, so the defining packages pass. Test files are
// exempt: a test builds what it tests.
func TestOnlyTheRootBuilds(t *testing.T) {
	root := moduleRoot(t)
	module := modulePath(t, root)
	fset := token.NewFileSet()
	inRoot := 0
	eachPackage(t, root, func(pkg string, bp *build.Package) {
		for name, f := range parseGo(t, fset, bp) {
			found := builds(fset, f, module)
			if pkg == compositionRoot {
				inRoot += len(found)
				continue
			}
			for _, b := range found {
				t.Errorf("%s/%s:%s: only the composition root (internal/app) builds the services and engines", pkg, name, b)
			}
		}
	})
	if inRoot < 8 {
		t.Errorf("found %d constructions in %s, want its 8 constructor calls at least: the checker is wrong", inRoot, compositionRoot)
	}
}

// TestOnlyTheRootBuildsCatch checks the checker on a made-up file, so a
// pattern that matches nothing cannot pass silently.
func TestOnlyTheRootBuildsCatch(t *testing.T) {
	const src = `package tool

import (
	"example.com/other/payment"
	ops "github.com/paygate/paygate/internal/operation"
	pay "github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/verification"
)

var (
	a = pay.NewService(nil)
	b = ops.NewEngine[R, T](nil)
	c = &payout.Engine{Log: nil}
	d = ops.Engine[R, T]{}
	e = verification.Service{}
	f = new(subscription.Service)
	g = verification.NewEngine
	h = payment.NewService()                // another module's payment
	i = pay.NewHandler[R, T](nil)           // not a constructor of built
	j *pay.Service                          // naming the type builds nothing
	k = subscription.ClockSource{}          // not one of built's types
	l = &pay.Engine{}
)
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "tool.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"13: pay.NewService",
		"14: ops.NewEngine",
		"15: payout.Engine{}",
		"16: ops.Engine{}",
		"17: verification.Service{}",
		"18: new(subscription.Service)",
		"19: verification.NewEngine",
		"24: pay.Engine{}",
	}
	if got := builds(fset, f, "github.com/paygate/paygate"); !slices.Equal(got, want) {
		t.Errorf("builds:\n got %q\nwant %q", got, want)
	}
}

// builds returns, in order, each place f builds one of built: a use of its
// constructor ("13: pay.NewService", called or not), a composite literal of
// its type, with or without type arguments ("15: payout.Engine{}"), or
// new of it. The packages are known by the names f imports them under.
func builds(fset *token.FileSet, f *ast.File, module string) []string {
	names := map[string]string{} // import name → package, relative to module
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok || built[rel] == nil {
			continue
		}
		name := path.Base(rel)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = rel
	}
	// ref returns "pay.Engine" when e names one of built's types (type
	// arguments aside) or "pay.NewEngine" its constructor, and which.
	ref := func(e ast.Expr) (name string, constructor bool) {
		switch x := e.(type) {
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", false
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", false
		}
		for _, typ := range built[names[id.Name]] {
			if sel.Sel.Name == typ || sel.Sel.Name == "New"+typ {
				return id.Name + "." + sel.Sel.Name, sel.Sel.Name != typ
			}
		}
		return "", false
	}

	var found []string
	add := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%d: %s", fset.Position(n.Pos()).Line, what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if s, constructor := ref(n); constructor {
				add(n, s)
			}
		case *ast.CompositeLit:
			if s, constructor := ref(n.Type); s != "" && !constructor {
				add(n, s+"{}")
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
				if s, constructor := ref(n.Args[0]); s != "" && !constructor {
					add(n, "new("+s+")")
				}
			}
		}
		return true
	})
	return found
}
