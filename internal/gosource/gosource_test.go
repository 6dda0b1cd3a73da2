package gosource

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWalk(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a.go", "a_test.go", "sub/b.go", "frontend/c.go", "node_modules/d.go", "testdata/e.go", "notes.txt"} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		tests bool
		want  []string
	}{
		{false, []string{"a.go", "sub/b.go"}},
		{true, []string{"a.go", "a_test.go", "sub/b.go"}},
	} {
		var got []string
		err := Walk(root, Options{Tests: tc.tests}, func(path string, _ *token.FileSet, f *ast.File) error {
			rel, _ := filepath.Rel(root, path)
			got = append(got, filepath.ToSlash(rel))
			return nil
		})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("tests %v: walked %v (%v), want %v", tc.tests, got, err, tc.want)
		}
	}
}
