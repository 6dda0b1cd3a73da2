package bridge

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestLoadDocsValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		fsys fs.FS
		want string // "" is valid
	}{
		{"the embedded docs", docsFS, ""},
		{"a page", fstest.MapFS{"a.md": {Data: []byte("# Keys\nText.\n## Make one\nMore.\n")}}, ""},
		{"no pages", fstest.MapFS{}, "no documentation pages"},
		{"no title", fstest.MapFS{"a.md": {Data: []byte("Just text.\n")}}, "does not open with its title"},
		{"empty title", fstest.MapFS{"a.md": {Data: []byte("# \nText.\n")}}, "does not open with its title"},
		{"not text", fstest.MapFS{"a.md": {Data: []byte("# T\n\xff\xfe")}}, "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secs, err := loadDocs(tc.fsys)
			switch {
			case tc.want == "" && (err != nil || len(secs) == 0):
				t.Errorf("loadDocs: %d sections, %v", len(secs), err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("loadDocs: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestDocsCannotBeLoaded is spec 004 §10's row: when the documentation cannot be loaded or
// validated, ensemble_docs is a tool error naming the docs home, never an empty match.
func TestDocsCannotBeLoaded(t *testing.T) {
	saved := docsFS
	docsFS = fstest.MapFS{"broken.md": {Data: []byte("no title here\n")}}
	t.Cleanup(func() { docsFS = saved })
	ctx := context.Background()
	b := New(ctx, Config{DataDir: t.TempDir(), Key: "", Version: "test"})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := b.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ensemble_docs", Arguments: map[string]any{"query": "keys"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, DocsHome) || !strings.Contains(text, "could not be loaded") {
		t.Errorf("ensemble_docs with broken docs: error %v, %q", res.IsError, text)
	}
}
