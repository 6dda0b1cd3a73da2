// Package gosource walks the project's own Go files for the tests that read the code itself: the
// import rules, the tables' owners and the event kinds. It leaves out what is not the project's
// Go (node_modules, .git, the frontend, testdata).
package gosource

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
)

// Options says which files Walk parses and how.
type Options struct {
	Tests bool        // also the _test.go files
	Mode  parser.Mode // as go/parser takes it
}

// Walk parses each Go file below root and calls fn with its path, the file set its positions are
// in and the file. The first error, a file that does not parse or fn's, ends the walk.
func Walk(root string, o Options, fn func(path string, fset *token.FileSet, f *ast.File) error) error {
	fset := token.NewFileSet()
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "frontend", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || !o.Tests && strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, o.Mode)
		if err != nil {
			return err
		}
		return fn(path, fset, f)
	})
}
