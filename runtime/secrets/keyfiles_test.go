package secrets

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

func TestKeyPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/a/.env": true, "/a/.env.local": true, "/a/.ENV": true, "/h/.ssh/id_ed25519": true, "/h/.ssh/config": true,
		"/a/server.pem": true, "/a/tls.KEY": true, "/h/.npmrc": true, "/h/.aws/config": true, "/a/credentials.json": true,
		"/h/.zsh_history": true, "/r/.git/config": true, `C:\Users\a\.ssh\known_hosts`: true,
		"/a/main.go": false, "/a/environment.md": false, "/a/.envrc.md": false, "/a/keys.txt": false, "/a/ssh/notes": false,
	} {
		if got := KeyPath(p) != ""; got != want {
			t.Errorf("KeyPath(%q) = %q, want a reason: %v", p, KeyPath(p), want)
		}
	}
}

func TestArchiveProblem(t *testing.T) {
	zipOf := func(name, body string) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w, _ := zw.Create(name)
		w.Write([]byte(body))
		zw.Close()
		return b.Bytes()
	}
	tgzOf := func(name, body string) []byte {
		var b bytes.Buffer
		gz := gzip.NewWriter(&b)
		tw := tar.NewWriter(gz)
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body))})
		tw.Write([]byte(body))
		tw.Close()
		gz.Close()
		return b.Bytes()
	}
	holds := func(b []byte) bool { return bytes.Contains(b, []byte("s3cr3t")) }
	for _, c := range []struct {
		name string
		data []byte
		want string // a word of the reason, or "" for none
	}{
		{"site.zip", zipOf("app/.env", "A=1"), ".env"},
		{"site.zip", zipOf("app/readme.md", "the s3cr3t value"), "saved secret"},
		{"site.zip", zipOf("app/readme.md", "hello"), ""},
		{"site.tgz", tgzOf("home/.ssh/id_rsa", "x"), "keys or sign-ins"},
		{"site.tar.gz", tgzOf("notes.txt", "s3cr3t"), "notes.txt"},
		{"site.tar.gz", tgzOf("notes.txt", "fine"), ""},
		{"notes.txt", []byte("s3cr3t"), ""}, // not an archive: the caller reads it as words
		{"broken.zip", []byte("not a zip"), ""},
	} {
		got := ArchiveProblem(c.name, c.data, holds)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("ArchiveProblem(%s) = %q, want %q", c.name, got, c.want)
		}
	}
}
