package bridge_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
)

func (r *runtime) addFile(t *testing.T, name, mt string, data []byte) string {
	t.Helper()
	f, err := r.files.Add(context.Background(), ledger.Actor{Kind: ledger.Person}, records.NewFile{Name: name, MediaType: mt, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return f.ID
}

func TestGetFile(t *testing.T) {
	r := startRuntime(t)
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 100)...)
	textID := r.addFile(t, "notes.md", "", []byte("# Notes\n"+strings.Repeat("word ", 10000)))
	pngID := r.addFile(t, "chart.png", "image/png", png)
	pdfID := r.addFile(t, "spec.pdf", "application/pdf", []byte("%PDF-1.4 not really"))
	cs := connect(t, r, r.key(t, "reader", false), t.TempDir())

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ensemble_get_file", Arguments: map[string]any{"id": records.Handle("file", textID)}})
	if err != nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("text file: %v %+v", err, res)
	}
	if tc := res.Content[1].(*mcp.TextContent); !strings.Contains(tc.Text, "trust: untrusted") || !strings.Contains(tc.Text, "# Notes") {
		t.Errorf("text content = %.80q", tc.Text)
	}
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ensemble_get_file", Arguments: map[string]any{"id": pngID}})
	if img, ok := res.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, png) {
		t.Errorf("png content = %+v", res.Content[1])
	}
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ensemble_get_file", Arguments: map[string]any{"id": pdfID}})
	if er, ok := res.Content[1].(*mcp.EmbeddedResource); !ok || er.Resource.MIMEType != "application/pdf" || er.Resource.URI != records.Handle("file", pdfID) {
		t.Errorf("pdf content = %+v", res.Content[1])
	}
	out := mustCall(t, cs, "ensemble_get_file", map[string]any{"id": textID, "content": false, "text": true, "offset": 100, "limit": 50})
	tx := out["text"].(map[string]any)
	if tx["trust"] != "untrusted" || len([]rune(tx["text"].(string))) != 50 || !strings.Contains(tx["more"].(string), "offset=150") {
		t.Errorf("text part = %v", tx)
	}
	out = mustCall(t, cs, "ensemble_get_file", map[string]any{"id": pdfID, "content": false, "text": true})
	if !strings.Contains(mustJSON(out["text"]), "no OCR") {
		t.Errorf("pdf text = %v", out["text"])
	}
	mustFail(t, cs, "ensemble_get_file", map[string]any{"id": "fil_0000000000000000"}, "There is no file")
	out = mustCall(t, cs, "ensemble_files", map[string]any{"query": "notes"})
	if out["total"].(float64) != 1 {
		t.Errorf("files query = %v", out)
	}
	if out = mustCall(t, cs, "ensemble_files", map[string]any{"limit": 2}); len(out["files"].([]any)) != 2 || out["total"].(float64) != 3 {
		t.Errorf("files page = %v", out)
	}
}

func TestSaveTo(t *testing.T) {
	r := startRuntime(t)
	id := r.addFile(t, "spec.pdf", "application/pdf", []byte("%PDF original"))
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(dir, "exists.pdf"), []byte("mine"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link"))
	os.Symlink(filepath.Join(outside, "target.pdf"), filepath.Join(dir, "dangling.pdf"))
	cs := connect(t, r, r.key(t, "reader", false), dir)
	for _, tc := range []struct{ name, saveTo, want string }{
		{"parent", "../escape.pdf", "“..”"},
		{"hidden parent", "docs/../../escape.pdf", "“..”"},
		{"absolute outside", filepath.Join(outside, "x.pdf"), "outside the working folder"},
		{"through a link", "link/x.pdf", "symbolic link"},
		{"onto a link", "dangling.pdf", "symbolic link"},
		{"over a file", "exists.pdf", "already exists"},
		{"the folder itself", ".", "outside the working folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustFail(t, cs, "ensemble_get_file", map[string]any{"id": id, "saveTo": tc.saveTo}, tc.want)
		})
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("something was written outside: %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "exists.pdf")); string(b) != "mine" {
		t.Errorf("an existing file was overwritten")
	}
	out := mustCall(t, cs, "ensemble_get_file", map[string]any{"id": id, "saveTo": "docs/new/spec.pdf"})
	if b, _ := os.ReadFile(filepath.Join(dir, "docs", "new", "spec.pdf")); string(b) != "%PDF original" {
		t.Errorf("saved %q (%v)", b, out)
	}
	mustCall(t, cs, "ensemble_get_file", map[string]any{"id": id, "saveTo": filepath.Join(dir, "exists.pdf"), "overwrite": true})
	if b, _ := os.ReadFile(filepath.Join(dir, "exists.pdf")); string(b) != "%PDF original" {
		t.Errorf("overwrite wrote %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "dangling.pdf")); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced")
	}
}
