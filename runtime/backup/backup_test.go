package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/store"
)

// dataFolder is a data folder as a runtime leaves it: a database, a saved secret (and so the
// local key), and one of the person's files.
func dataFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, dbName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sec, err := secrets.New(context.Background(), secrets.Options{DataDir: dir, Store: st, Writer: ledger.New(st, events.NewBus())})
	if err != nil {
		t.Fatal(err)
	}
	if err := sec.Set(context.Background(), "API_TOKEN", secrets.Run, "backup-canary-value-42", []string{"https://api.example.com"}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "files", "att"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "files", "att", "notes.txt"), []byte("my notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "workspace", "job_x"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openSecret reads the saved secret from a data folder, as a runtime started there would.
func openSecret(t *testing.T, dir string) string {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, dbName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sec, err := secrets.New(context.Background(), secrets.Options{DataDir: dir, Store: st, Writer: ledger.New(st, events.NewBus())})
	if err != nil {
		t.Fatal(err)
	}
	v, err := sec.Get(context.Background(), "API_TOKEN")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A backup to a recipient or a passphrase restores into a fresh data folder, where the saved
// secret opens again; it does not open with another identity or into a folder that has a database.
func TestBackupRestores(t *testing.T) {
	src := dataFolder(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	pass, err := age.NewScryptRecipient("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	pass.SetWorkFactor(10)
	for _, c := range []struct {
		name string
		to   age.Recipient
		with age.Identity
	}{
		{"recipient", id.Recipient(), id},
		{"passphrase", pass, mustScrypt(t, "correct horse battery staple")},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(context.Background(), src, &buf, c.to); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(buf.Bytes(), []byte("my notes")) || bytes.Contains(buf.Bytes(), []byte("SQLite format")) {
				t.Fatal("the backup is not encrypted")
			}
			dst := filepath.Join(t.TempDir(), "data")
			n, err := Restore(bytes.NewReader(buf.Bytes()), dst, c.with)
			if err != nil {
				t.Fatal(err)
			}
			if got := openSecret(t, dst); got != "backup-canary-value-42" || n < 4 {
				t.Fatalf("restored %d files; the secret reads %q", n, got)
			}
			if b, err := os.ReadFile(filepath.Join(dst, "files", "att", "notes.txt")); err != nil || string(b) != "my notes" {
				t.Fatalf("the person's file: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(dst, "workspace")); err == nil {
				t.Fatal("run folders were backed up")
			}
			if _, err := Restore(bytes.NewReader(buf.Bytes()), dst, c.with); err == nil || !strings.Contains(err.Error(), "already holds a database") {
				t.Fatalf("a restore over a database: %v", err)
			}
			other, _ := age.GenerateX25519Identity()
			if _, err := Restore(bytes.NewReader(buf.Bytes()), filepath.Join(t.TempDir(), "d"), other); err == nil {
				t.Fatal("the backup opened with another identity")
			}
		})
	}
}

func mustScrypt(t *testing.T, p string) age.Identity {
	id, err := age.NewScryptIdentity(p)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A backup naming a path outside what a backup keeps is refused at that entry.
func TestRestoreRefusesStrangeEntries(t *testing.T) {
	id, _ := age.GenerateX25519Identity()
	for _, name := range []string{"../escape.txt", "/etc/passwd", "workspace/x", "api.json"} {
		var buf bytes.Buffer
		enc, _ := age.Encrypt(&buf, id.Recipient())
		tw := tar.NewWriter(enc)
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: 1, Typeflag: tar.TypeReg})
		tw.Write([]byte("x"))
		tw.Close()
		enc.Close()
		dst := filepath.Join(t.TempDir(), "data")
		if _, err := Restore(&buf, dst, id); err == nil || !strings.Contains(err.Error(), "which no backup keeps") {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "escape.txt")); err == nil {
			t.Fatal("an entry escaped the data folder")
		}
	}
}
