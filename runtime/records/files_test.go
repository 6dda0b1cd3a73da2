package records

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

func TestFiles(t *testing.T) {
	s, _, _ := newService(t)
	ctx := context.Background()
	fs := s.Files(filepath.Join(t.TempDir(), "files"))
	task, _ := s.Tasks().Create(ctx, me, TaskInput{Title: Some("Measure latency"), Page: Some("Plan.")})
	f, err := fs.Add(ctx, me, NewFile{Name: "readout.md", Data: []byte("# p99\n40 ms"), Summary: "Latency numbers",
		Attach: []string{Handle("task", task.ID)}})
	if err != nil {
		t.Fatal(err)
	}
	if f.MediaType != "text/markdown" || f.Size != 11 || !f.HasText || f.Attached[0] != Handle("task", task.ID) {
		t.Errorf("file = %+v", f)
	}
	task, _ = s.Tasks().Get(ctx, task.ID)
	if task.Page != "Plan.\n\n[@readout.md]("+Handle("file", f.ID)+")" {
		t.Errorf("task page = %q", task.Page)
	}
	// The same bytes are kept once.
	g, _ := fs.Add(ctx, me, NewFile{Name: "copy.md", Data: []byte("# p99\n40 ms")})
	if g.SHA256 != f.SHA256 {
		t.Error("same bytes, different hash")
	}
	r, meta, err := fs.Open(ctx, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "# p99\n40 ms" || meta.Name != "readout.md" {
		t.Errorf("open = %q %+v", b, meta)
	}
	png, _ := fs.Add(ctx, me, NewFile{Name: "x.png", Data: append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, 10)...)})
	if png.MediaType != "image/png" || png.HasText {
		t.Errorf("png = %+v", png)
	}
	for _, tc := range []struct {
		f    FileFilter
		want int
	}{
		{FileFilter{}, 3}, {FileFilter{Query: "latency"}, 1}, {FileFilter{Query: "p99"}, 2},
		{FileFilter{On: Handle("task", task.ID)}, 1}, {FileFilter{Limit: 1}, 1},
	} {
		list, total, err := fs.List(ctx, tc.f)
		if err != nil || len(list) != tc.want {
			t.Errorf("List(%+v) = %d (total %d) %v, want %d", tc.f, len(list), total, err, tc.want)
		}
	}
	// Search finds a file by name and summary, never by its text.
	if hits, _ := s.Search(ctx, SearchQuery{Text: "latency"}); len(hits) != 2 {
		t.Errorf("search latency = %v", refs(hits))
	}
	if hits, _ := s.Search(ctx, SearchQuery{Text: "p99", Kinds: []string{"file"}}); len(hits) != 0 {
		t.Errorf("search found a file's text: %v", refs(hits))
	}
	for _, bad := range []NewFile{{Name: "../x"}, {Name: ""}, {Name: "a/b"}, {Name: "ok.txt", Attach: []string{"ensemble://task/tsk_missing"}}} {
		if _, err := fs.Add(ctx, me, bad); err == nil {
			t.Errorf("Add(%+v) was accepted", bad)
		}
	}
	// Undo takes the upload back off the task too.
	if _, err := s.Undo(ctx, me); err != nil { // the png was the last write
		t.Fatal(err)
	}
	if _, _, err := fs.Open(ctx, png.ID); !IsNotFound(err) {
		t.Errorf("undone file still there: %v", err)
	}
	if txt, _ := fs.Text(ctx, f.ID); !strings.Contains(txt, "40 ms") {
		t.Errorf("text = %q", txt)
	}
}
