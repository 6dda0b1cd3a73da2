package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrateFromEveryVersion opens a database left at each earlier schema version and checks it
// ends with exactly the schema a new database gets.
func TestMigrateFromEveryVersion(t *testing.T) {
	ctx := context.Background()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	want := schemaOf(t, openAt(t, ms, len(ms)))
	for k := 0; k < len(ms); k++ {
		path := filepath.Join(t.TempDir(), "ensemble.db")
		db := openAt(t, ms, k, path)
		db.Close()
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("from version %d: %v", k, err)
		}
		if got := schemaOf(t, s.Reader()); got != want {
			t.Errorf("from version %d the schema differs from a new database's:\n%s\nwant\n%s", k, got, want)
		}
		s.Close()
	}
}

// TestFailedMigrationChangesNothing breaks the last migration and checks the database keeps its
// version and its schema: the migrations before it are not left half applied.
func TestFailedMigrationChangesNothing(t *testing.T) {
	ctx := context.Background()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ensemble.db")
	db := openAt(t, ms, 1, path)
	before := schemaOf(t, db)
	broken := append(append([]migration(nil), ms[:len(ms)-1]...), migration{version: len(ms), name: "broken.sql", sql: "CREATE TABLE"})
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = applyAll(ctx, tx, broken[1:], len(ms))
	tx.Rollback()
	if err == nil || !strings.Contains(err.Error(), "broken.sql") {
		t.Fatalf("applying a broken migration: %v", err)
	}
	if v, _ := schemaVersion(ctx, db); v != 1 {
		t.Errorf("version %d after a failed migration, want 1", v)
	}
	if after := schemaOf(t, db); after != before {
		t.Errorf("schema changed by a failed migration:\n%s", after)
	}
}

// openAt makes a database with the first k migrations applied, as an older Ensemble left it.
func openAt(t *testing.T, ms []migration, k int, path ...string) *sql.DB {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ensemble.db")
	if len(path) > 0 {
		p = path[0]
	}
	db, err := sql.Open("sqlite", dsn(p, writePool))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := applyAll(ctx, tx, ms[:k], k); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

func schemaOf(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query("SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s: %s\n", typ, name, text)
	}
	return b.String()
}
