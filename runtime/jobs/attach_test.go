package jobs

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attach_evidence keeps what the person should see, never a file of keys, and holds a file that
// shows a saved secret or something shaped like a key for the person's preview.
func TestAttachEvidence(t *testing.T) {
	e, j, sess := runClient(t, nil, func(o *Options) {
		o.Hide = func(s string) string { return strings.ReplaceAll(s, "hunter2-kept", "[hidden]") }
	})
	zipOf := func(name, body string) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w, _ := zw.Create(name)
		w.Write([]byte(body))
		zw.Close()
		return b.Bytes()
	}
	files := map[string][]byte{
		"notes.txt":      []byte("what the run found"),
		".env":           []byte("A=1"),
		".env.local":     []byte("A=1"),
		"server.pem":     []byte("MIIB-body"),
		"secret.txt":     []byte("the password is hunter2-kept"),
		"token.log":      []byte("token = ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
		"site.zip":       zipOf("index.html", "<h1>hi</h1>"),
		"keys.zip":       zipOf("app/.env", "A=1"),
		"secretsin.zip":  zipOf("config.txt", "hunter2-kept"),
		"sub/.ssh/notes": []byte("x"),
	}
	for name, b := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(e.folder, name)), 0o700)
		if err := os.WriteFile(filepath.Join(e.folder, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		path string
		want string // a word of the answer
		err  bool
	}{
		{"notes.txt", "Attached notes.txt as evd_", false},
		{"site.zip", "Attached site.zip as evd_", false},
		{".env", "never attaches", true},
		{".env.local", "never attaches", true},
		{"server.pem", "a key or a certificate", true},
		{"keys.zip", "app/.env", true},
		{"sub/.ssh/notes", ".ssh", true},
		{"secret.txt", "held for the person's preview", false},
		{"token.log", "held for the person's preview", false},
		{"secretsin.zip", "held for the person's preview", false},
	} {
		text, isErr := callText(t, sess, "attach_evidence", map[string]any{"path": c.path, "kind": "file"})
		if isErr != c.err || !strings.Contains(text, c.want) {
			t.Errorf("attach %s: %q (error %v), want %q (error %v)", c.path, text, isErr, c.want, c.err)
		}
		if c.err && strings.Contains(text, string(files[c.path])) && len(files[c.path]) > 3 {
			t.Errorf("attach %s: the refusal shows the file: %q", c.path, text)
		}
	}
	held, err := e.svc.HeldFiles(context.Background(), j.ID)
	if err != nil || len(held) != 3 {
		t.Fatalf("held: %+v %v, want secret.txt, token.log and secretsin.zip", held, err)
	}
	kept, _ := filepath.Glob(filepath.Join(e.data, "evidence", j.ID, "evd_*"))
	if len(kept) != 2 {
		t.Fatalf("evidence %v, want notes.txt and site.zip", kept)
	}
	for _, p := range kept {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte("hunter2")) || bytes.Contains(b, []byte("A=1")) {
			t.Fatalf("%s holds what was refused", p)
		}
	}
}
