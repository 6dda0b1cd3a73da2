package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

func TestOpenMigratesFromEmpty(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ensemble.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := schemaVersion(ctx, s.Reader())
	if err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion() || v == 0 {
		t.Fatalf("schema version = %d, want %d", v, SchemaVersion())
	}
	for _, table := range []string{"spaces", "tasks", "projects", "pages", "people", "repos", "ledger_groups", "ledger_changes", "events"} {
		var n int
		if err := s.Reader().QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", table).Scan(&n); err != nil || n != 1 {
			t.Errorf("table %s: count %d, err %v", table, n, err)
		}
	}
	var mode string
	s.Reader().QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	var fk int
	s.Writer().QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
	if fk != 1 {
		t.Errorf("foreign_keys = %d, want 1", fk)
	}
}

func TestOpenTwiceIsIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ensemble.db")
	for i := 0; i < 2; i++ {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		var spaces int
		s.Reader().QueryRowContext(ctx, "SELECT count(*) FROM spaces").Scan(&spaces)
		if spaces != 1 {
			t.Errorf("open %d: %d spaces, want the personal one", i, spaces)
		}
		s.Close()
	}
}

func TestOpenRefusesNewerDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ensemble.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Writer().ExecContext(ctx, "PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrTooNew) {
		t.Fatalf("open newer database: err = %v, want ErrTooNew", err)
	}
	want := fmt.Sprintf("The database %s is from a newer version of Ensemble (schema version 999; this one knows up to %d); update Ensemble to open it.",
		path, SchemaVersion())
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	// Refused, it is left as it was: no migration ran over it.
	r, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var v int
	if err := r.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 999 {
		t.Errorf("after the refusal the schema version is %d (%v), want 999", v, err)
	}
}

func TestBackupWhileOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Writer().ExecContext(ctx, "INSERT INTO spaces (id, name, kind, created_at) VALUES ('spc_x', 'X', 'shared', 'now')"); err != nil {
		t.Fatal(err)
	}
	for name, do := range map[string]func(dest string) error{
		"store": func(dest string) error { return s.Backup(ctx, dest) },
		"file":  func(dest string) error { return BackupFile(ctx, s.Path(), dest) },
	} {
		dest := filepath.Join(dir, name+".db")
		if err := do(dest); err != nil {
			t.Fatalf("%s backup: %v", name, err)
		}
		b, err := Open(ctx, dest)
		if err != nil {
			t.Fatalf("%s: open backup: %v", name, err)
		}
		var n int
		b.Reader().QueryRowContext(ctx, "SELECT count(*) FROM spaces").Scan(&n)
		b.Close()
		if n != 2 {
			t.Errorf("%s backup has %d spaces, want 2", name, n)
		}
		if err := do(dest); err == nil {
			t.Errorf("%s: backup over an existing file succeeded, want an error", name)
		}
	}
}
