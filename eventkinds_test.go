package main

import (
	"go/ast"
	"go/token"
	"testing"

	"github.com/ensemblework/ensemble/internal/gosource"
)

// TestEventKindsAreConstants: every event is emitted with a kind declared as an events.Kind
// constant beside its payload, never a string spelled or built at the call, so the catalog the
// UI's list is generated from (app/eventkinds.go) names every kind there is.
func TestEventKindsAreConstants(t *testing.T) {
	err := gosource.Walk(".", gosource.Options{}, func(path string, fset *token.FileSet, f *ast.File) error {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			arg := -1
			switch {
			case sel.Sel.Name == "Emit" && len(call.Args) == 3:
				arg = 0
			case sel.Sel.Name == "Append" && isIdent(sel.X, "events") && len(call.Args) == 6:
				arg = 3
			}
			if arg < 0 {
				return true
			}
			switch call.Args[arg].(type) {
			case *ast.BasicLit, *ast.BinaryExpr:
				t.Errorf("%s: an event's kind is spelled at the call; declare it as an events.Kind constant beside its payload and list it in the package's EventSpecs",
					fset.Position(call.Pos()))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
