package app

import (
	"bytes"
	"flag"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ensemblework/ensemble/internal/gosource"
)

var update = flag.Bool("update-ts", false, "rewrite the generated TypeScript files (go generate ./app)")

// TestGeneratedTypeScript fails when a file the UI imports that is generated from the runtime's
// declarations is stale: run `go generate ./app`.
func TestGeneratedTypeScript(t *testing.T) {
	for _, g := range []struct {
		path   string
		render func() ([]byte, error)
	}{
		{eventKindsTS, eventKindsModule},
		{catalogTS, catalogModule},
	} {
		want, err := g.render()
		if err != nil {
			t.Fatalf("%s: %v", g.path, err)
		}
		path := filepath.Join("..", g.path)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go generate ./app)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./app", g.path)
		}
	}
}

// TestEventCatalogIsComplete: every events.Kind constant declared in the tree is in the catalog
// the UI's list is generated from, so a new kind cannot be left out of it.
func TestEventCatalogIsComplete(t *testing.T) {
	declared := map[string]string{} // kind → where
	err := gosource.Walk("..", gosource.Options{}, func(path string, fset *token.FileSet, f *ast.File) error {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if !isKindType(vs.Type, f.Name.Name) {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						k, _ := strconv.Unquote(lit.Value)
						declared[k] = fset.Position(lit.Pos()).String()
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inCatalog := map[string]bool{}
	for _, s := range eventCatalog() {
		inCatalog[string(s.Kind)] = true
		if _, ok := declared[string(s.Kind)]; !ok {
			t.Errorf("the catalog lists %q, which no events.Kind constant declares", s.Kind)
		}
	}
	for k, where := range declared {
		if !inCatalog[k] {
			t.Errorf("%s: kind %q is not in the catalog: list it in its package's EventSpecs (app/eventkinds.go)", where, k)
		}
	}
	if len(declared) < 60 {
		t.Errorf("found %d kinds declared; the walk missed some", len(declared))
	}
}

// isKindType reports whether a constant's type is events.Kind (Kind inside package events).
func isKindType(e ast.Expr, pkg string) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "events" && e.Sel.Name == "Kind"
	case *ast.Ident:
		return pkg == "events" && e.Name == "Kind"
	}
	return false
}
