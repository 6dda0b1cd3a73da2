package computer

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShare(t *testing.T) {
	f := newFixture(t, Options{Hide: func(s string) string { return strings.ReplaceAll(s, "sk_live_canary", "[hidden]") }})
	p := f.c.Policy(nil, false)
	write := func(rel, body string) string {
		path := filepath.Join(f.own, rel)
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(body), 0o644)
		return path
	}
	report := write("report.md", "# Findings\n")
	sh, err := f.c.Share(report, p)
	if err != nil || sh.Name != "report.md" || sh.Size != 11 || sh.Type == "" {
		t.Fatalf("Share = %+v, %v", sh, err)
	}
	if r, err := f.c.SharedFile(sh.ID); err != nil {
		t.Fatal(err)
	} else {
		r.Close()
	}
	for _, bad := range []string{write(".env", "A=1"), write("server.pem", "x"), write("keys/id_ed25519", "x"), write(".ssh/config", "x"),
		write("notes.txt", "the key is sk_live_canary"), write(".bash_history", "ls")} {
		if _, err := f.c.Share(bad, p); err == nil {
			t.Errorf("%s was shared", bad)
		}
	}
	os.Symlink(report, filepath.Join(f.own, "link.md"))
	if _, err := f.c.Share(filepath.Join(f.own, "link.md"), p); err == nil {
		t.Error("a link was shared")
	}
	if _, err := f.c.Share(filepath.Join(f.data, "ensemble.db"), p); err == nil {
		t.Error("Ensemble's database was shared")
	}
	// An archive with a key inside is refused.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("deploy/.env")
	w.Write([]byte("TOKEN=1"))
	zw.Close()
	if _, err := f.c.Share(write("bundle.zip", buf.String()), p); err == nil || !strings.Contains(err.Error(), ".env") {
		t.Errorf("an archive with .env inside: %v", err)
	}
}

func TestShareFolder(t *testing.T) {
	f := newFixture(t, Options{Hide: func(s string) string { return strings.ReplaceAll(s, "sk_live_canary", "[hidden]") }})
	site := filepath.Join(f.own, "site")
	for rel, body := range map[string]string{"index.html": "<h1>hi</h1>", "app.js": "const key = 'sk_live_canary';", ".env": "X=1",
		"node_modules/x/index.js": "x", "img/logo.png": "\x89PNG\x00\x01"} {
		os.MkdirAll(filepath.Join(site, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(site, rel), []byte(body), 0o644)
	}
	sh, err := f.c.Share(site, f.c.Policy(nil, false))
	if err != nil || sh.Name != "site.zip" {
		t.Fatalf("Share = %+v, %v", sh, err)
	}
	left := strings.Join(sh.LeftOut, " ")
	if !strings.Contains(left, "node_modules") || !strings.Contains(left, ".env") {
		t.Errorf("left out %q; want node_modules and .env", left)
	}
	r, _ := f.c.SharedFile(sh.ID)
	defer r.Close()
	fi, _ := r.Stat()
	zr, err := zip.NewReader(r, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, zf := range zr.File {
		names = append(names, zf.Name)
		if zf.Name == "app.js" {
			rc, _ := zf.Open()
			var b bytes.Buffer
			b.ReadFrom(rc)
			if strings.Contains(b.String(), "sk_live_canary") {
				t.Error("the zipped text was not redacted")
			}
		}
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "index.html") || !strings.Contains(got, "img/logo.png") || strings.Contains(got, ".env") {
		t.Errorf("the zip holds %s", got)
	}
	for _, bad := range []string{"nf_../x", "../../etc/passwd", "nf_x/y"} {
		if _, err := f.c.SharedFile(bad); err == nil {
			t.Errorf("SharedFile(%q) opened something", bad)
		}
	}
}
