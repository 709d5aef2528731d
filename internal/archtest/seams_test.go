package archtest

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// handlerMethod selects the methods of a resource's operation handler
// that carry its reader and transaction.
func handlerMethod(name string) bool {
	return name == "Load" || name == "Apply" || name == "Unreadable"
}

// seams are the packages whose signatures must say their types: which
// names are checked, and some the walk must find (a method as Type.Name).
var seams = []struct {
	pkg     string
	selects func(name string) bool
	must    []string
}{
	{"internal/operation", ast.IsExported, []string{"NewEngine", "Engine.Run", "Handler.Load", "Handler.Apply"}},
	{"internal/handoff", ast.IsExported, []string{"Add", "AddPrepared", "Prepare", "Func", "Slot.Hand", "HandBack"}},
	{"internal/payment", handlerMethod, []string{"handler.Load", "handler.Apply", "handler.Unreadable"}},
	{"internal/payout", handlerMethod, []string{"handler.Load", "handler.Apply", "handler.Unreadable"}},
	{"internal/verification", handlerMethod, []string{"handler.Load", "handler.Apply", "handler.Unreadable"}},
}

// TestSeamsSayTheType protects the typed seams (docs/design/style.md, "Say
// the type"; docs/architecture.md, "The composition root"): no exported
// function, method, interface method or function type of the operation
// engine and of handoff, and no resource handler's Load, Apply or
// Unreadable, takes or returns any or interface{}: as itself, variadic, or
// in the signature of a function it takes or returns. A type parameter
// constrained by any ([D any]) and a type argument (Job[any]) say their
// type. Non-test files only.
func TestSeamsSayTheType(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	for _, s := range seams {
		bp, err := build.Default.ImportDir(filepath.Join(root, filepath.FromSlash(s.pkg)), 0)
		if err != nil {
			t.Fatal(err)
		}
		var checked []string
		for file, f := range parseGo(t, fset, bp) {
			for name, sig := range signatures(f, s.selects) {
				checked = append(checked, name)
				if takesAny(sig) {
					t.Errorf("%s/%s: %s takes or returns any: say the type", s.pkg, file, name)
				}
			}
		}
		for _, name := range s.must {
			if !slices.Contains(checked, name) {
				t.Errorf("%s: %s was not checked: the walk is wrong", s.pkg, name)
			}
		}
	}
}

// TestSeamsSayTheTypeCatch checks the checker on a made-up file, so a
// pattern that matches nothing cannot pass silently.
func TestSeamsSayTheTypeCatch(t *testing.T) {
	const src = `package seam

func Add[D any](name string, fn func(Job[D]) error) {}
func Of(j Job[any]) map[string]int { return nil }
func hidden(v any) {}
func Hand(v any) {}
func (w *Slot[G]) Take() (interface{}, error) { return nil, nil }
func Logf(format string, args ...any) {}
func With(fn func(ctx context.Context, v any) error) {}
func Later() func() any { return nil }
func (handler[R, T]) Load(r R, v any) {}
func (handler[R, T]) Apply(tx T, v interface{ Pending() bool }) {}

type Prepare func(given any) (any, error)
type Func[D any] func(j Job[D]) error
type Tx interface {
	Put(key string, v any)
	Get(key string) []byte
	Enqueuer
}
type tx interface{ Put(v any) }
`
	f, err := parser.ParseFile(token.NewFileSet(), "seam.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		selects func(string) bool
		want    []string
	}{
		{"exported", ast.IsExported, []string{"Hand", "Later", "Logf", "Prepare", "Slot.Take", "Tx.Put", "With", "handler.Load"}},
		{"handler methods", handlerMethod, []string{"handler.Load"}},
	} {
		var got []string
		for name, sig := range signatures(f, tc.selects) {
			if takesAny(sig) {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: takes any:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// signatures returns the signatures of f's declarations whose names
// selects, by name: functions, methods (as Type.Name), function types, and
// the methods of exported interfaces (as Interface.Name).
func signatures(f *ast.File, selects func(name string) bool) map[string]*ast.FuncType {
	sigs := map[string]*ast.FuncType{}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !selects(d.Name.Name) {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil {
				name = typeName(d.Recv.List[0].Type) + "." + name
			}
			sigs[name] = d.Type
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				switch typ := ts.Type.(type) {
				case *ast.FuncType:
					if selects(ts.Name.Name) {
						sigs[ts.Name.Name] = typ
					}
				case *ast.InterfaceType:
					if !ts.Name.IsExported() {
						continue
					}
					for _, m := range typ.Methods.List {
						sig, ok := m.Type.(*ast.FuncType)
						for _, id := range m.Names {
							if ok && selects(id.Name) {
								sigs[ts.Name.Name+"."+id.Name] = sig
							}
						}
					}
				}
			}
		}
	}
	return sigs
}

// typeName is the name of a receiver's type: Slot for *Slot[G].
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.IndexExpr:
		return typeName(x.X)
	case *ast.IndexListExpr:
		return typeName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

// takesAny reports whether a parameter or result of sig is any or
// interface{}: as itself, variadic (...any), or in the signature of a
// function type.
func takesAny(sig *ast.FuncType) bool {
	var isAny func(e ast.Expr) bool
	isAny = func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name == "any"
		case *ast.InterfaceType:
			return len(x.Methods.List) == 0
		case *ast.ParenExpr:
			return isAny(x.X)
		case *ast.Ellipsis:
			return isAny(x.Elt)
		case *ast.FuncType:
			return takesAny(x)
		}
		return false
	}
	for _, fields := range []*ast.FieldList{sig.Params, sig.Results} {
		if fields != nil && slices.ContainsFunc(fields.List, func(f *ast.Field) bool { return isAny(f.Type) }) {
			return true
		}
	}
	return false
}

// TestNoTransactionAsserted protects the typed seams where one domain calls
// another in its transaction (docs/architecture.md, "Typed seams"): no
// domain package's non-test file asserts a transaction's type at run time
// (x.(SomeTx), or a type switch case naming one); the interface it needs
// is in the signature, so a transaction that lacks a statement is a
// compile error. Payments hand the subscription domain recurring.Tx, never
// a narrower type it checks.
func TestNoTransactionAsserted(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	checked := 0
	eachPackage(t, root, func(pkg string, bp *build.Package) {
		if !domain(pkg) {
			return
		}
		for name, f := range parseGo(t, fset, bp) {
			checked++
			for _, at := range txAssertions(fset, f) {
				t.Errorf("%s/%s:%s: asserts a transaction's type: say it in the signature", pkg, name, at)
			}
		}
	})
	if checked < 50 {
		t.Errorf("checked %d files of domain packages: the walk is wrong", checked)
	}
}

// TestNoTransactionAssertedCatch checks the checker on a made-up file.
func TestNoTransactionAssertedCatch(t *testing.T) {
	const src = `package seam

func a(t any) {
	_ = t.(Tx)
	_, _ = t.(*payment.EngineTx)
	_ = t.(Reader)
	switch t.(type) {
	case string, subscription.ChargeTx:
	}
	switch v := t.(type) {
	case fmt.Stringer:
		_ = v
	}
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "seam.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"4", "5", "8"}
	if got := txAssertions(fset, f); !slices.Equal(got, want) {
		t.Errorf("assertions found at lines %q, want %q", got, want)
	}
}

// txAssertions lists the lines of f that assert a type named *Tx: a type
// assertion, or a type switch case.
func txAssertions(fset *token.FileSet, f *ast.File) []string {
	isTx := func(e ast.Expr) bool {
		if s, ok := e.(*ast.StarExpr); ok {
			e = s.X
		}
		if s, ok := e.(*ast.SelectorExpr); ok {
			e = s.Sel
		}
		id, ok := e.(*ast.Ident)
		return ok && strings.HasSuffix(id.Name, "Tx")
	}
	var lines []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.TypeAssertExpr:
			if x.Type != nil && isTx(x.Type) {
				lines = append(lines, strconv.Itoa(fset.Position(x.Pos()).Line))
			}
		case *ast.TypeSwitchStmt:
			for _, c := range x.Body.List {
				if slices.ContainsFunc(c.(*ast.CaseClause).List, isTx) {
					lines = append(lines, strconv.Itoa(fset.Position(c.Pos()).Line))
				}
			}
		}
		return true
	})
	return lines
}
