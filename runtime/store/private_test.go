//go:build !windows

package store

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFilesArePrivate: the database, its write-ahead log and index, and a backup are 0600, made so
// under a umask that would leave them world-readable, and made so again when they were left wider.
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "ensemble.db")
	check := func(when string, paths ...string) {
		t.Helper()
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if got := fi.Mode().Perm(); got != FileMode {
				t.Errorf("%s: %s is %o, want %o", when, filepath.Base(p), got, FileMode)
			}
		}
	}
	s, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Writer().ExecContext(ctx, "INSERT INTO spaces (id, name, kind, created_at) VALUES ('spc_x', 'X', 'shared', 'now')"); err != nil {
		t.Fatal(err)
	}
	files := []string{db, db + "-wal", db + "-shm"}
	check("new", files...)
	backup := filepath.Join(dir, "copy.db")
	if err := s.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	check("backup", backup)
	s.Close()

	// Left wider by another program or an older build while the runtime was stopped (an empty log
	// and index are what SQLite leaves after a crash before the first write).
	for _, f := range files {
		fh, err := os.OpenFile(f, os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		fh.Close()
		if err := os.Chmod(f, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	s, err = Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check("reopened", files...)
	var n int
	if err := s.Reader().QueryRowContext(ctx, "SELECT count(*) FROM spaces WHERE id = 'spc_x'").Scan(&n); err != nil || n != 1 {
		t.Errorf("reopened, the database lost its rows: %d (%v)", n, err)
	}
}
