package app

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
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
