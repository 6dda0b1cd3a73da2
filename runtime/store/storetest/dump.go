// Package storetest reads a whole database, for tests that check what it holds (nothing changed,
// nothing leaked).
package storetest

import (
	"database/sql"
	"testing"
)

// Table is one table's columns and rows, each value as the driver gives it.
type Table struct {
	Cols []string
	Rows [][]any
}

// Dump reads every table of db.
func Dump(t testing.TB, db *sql.DB) map[string]Table {
	t.Helper()
	names, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for names.Next() {
		var n string
		if err := names.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	names.Close()
	out := make(map[string]Table, len(tables))
	for _, name := range tables {
		out[name] = table(t, db, name)
	}
	return out
}

func table(t testing.TB, db *sql.DB, name string) Table {
	t.Helper()
	rows, err := db.Query(`SELECT * FROM "` + name + `"`)
	if err != nil {
		t.Fatalf("read table %s: %v", name, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	tb := Table{Cols: cols}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("read table %s: %v", name, err)
		}
		tb.Rows = append(tb.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read table %s: %v", name, err)
	}
	return tb
}
