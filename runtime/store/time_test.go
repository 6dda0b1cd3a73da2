package store

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestStampsSortAsTimes checks the one layout's text order is time order, including across the
// second boundary RFC 3339 with trimmed nanoseconds gets wrong.
func TestStampsSortAsTimes(t *testing.T) {
	base := time.Date(2026, 12, 2, 10, 0, 5, 0, time.UTC)
	times := []time.Time{base.Add(time.Second), base, base.Add(500 * time.Millisecond), base.Add(time.Nanosecond),
		base.Add(-time.Hour), base.In(time.FixedZone("x", 2*3600)).Add(time.Millisecond)}
	var stamps []string
	for _, tm := range times {
		stamps = append(stamps, Stamp(tm))
	}
	sort.Strings(stamps)
	sorted := append([]time.Time(nil), times...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	for i, s := range stamps {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(sorted[i]) || len(s) != len(TimeLayout) {
			t.Errorf("stamp %d is %q (%v), want %v", i, s, err, sorted[i])
		}
	}
}

func TestTimeScan(t *testing.T) {
	want := time.Date(2026, 12, 2, 10, 0, 5, 500_000_000, time.UTC)
	for _, tc := range []struct {
		src  any
		want time.Time
		err  bool
	}{
		{nil, time.Time{}, false},
		{"", time.Time{}, false},
		{"2026-12-02T10:00:05.500000000Z", want, false},
		{"2026-12-02T10:00:05.5Z", want, false},           // RFC 3339, trimmed, as rows were written before
		{"2026-12-02T12:00:05.5+02:00", want, false},      // with an offset
		{[]byte("2026-12-02T10:00:05.500Z"), want, false}, // milliseconds
		{want.In(time.FixedZone("x", 3600)), want, false}, // a driver's own time
		{"yesterday", time.Time{}, true},
		{int64(5), time.Time{}, true},
	} {
		var got Time
		err := got.Scan(tc.src)
		if (err != nil) != tc.err || !got.Equal(tc.want) || got.Location() != time.UTC && !got.IsZero() {
			t.Errorf("Scan(%v) = %v, %v", tc.src, got.Time, err)
		}
	}
	if v, _ := (Time{}).Value(); v != nil {
		t.Errorf("the zero Time is written as %v, not NULL", v)
	}
	if v, _ := TimeOf(want).Value(); v != "2026-12-02T10:00:05.500000000Z" {
		t.Errorf("a Time is written as %v", v)
	}
}

// TestMigrationRewritesTimes leaves rows in every shape earlier versions wrote, migrates, and
// checks each now holds the one layout for the same moment and that their order is kept.
func TestMigrationRewritesTimes(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	k := -1
	for i, m := range ms {
		if strings.Contains(m.name, "one_time_layout") {
			k = i
		}
	}
	if k < 0 {
		t.Fatal("no one_time_layout migration")
	}
	path := filepath.Join(t.TempDir(), "ensemble.db")
	db := openAt(t, ms, k, path)
	old := []string{
		"2026-12-02T10:00:04Z",           // RFC 3339, whole seconds
		"2026-12-02T10:00:05Z",           // …which sorted after the next one as text
		"2026-12-02T10:00:05.123456789Z", // already the layout
		"2026-12-02T10:00:05.5Z",         // trimmed nanoseconds
		"2026-12-02T12:00:06.25+02:00",   // an offset
		"2026-12-02 10:00:07",            // SQLite's own datetime()
		"not a time",                     // left as it was: read as an error later, not guessed at
	}
	for i, s := range old {
		if _, err := db.Exec(`INSERT INTO events (seq, at, kind, data) VALUES (?, ?, 'x', '{}')`, i+1, s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []string{
		"2026-12-02T10:00:04.000000000Z", "2026-12-02T10:00:05.000000000Z", "2026-12-02T10:00:05.123456789Z",
		"2026-12-02T10:00:05.500000000Z", "2026-12-02T10:00:06.250000000Z", "2026-12-02T10:00:07.000000000Z",
		"not a time",
	}
	rows, err := s.Reader().Query(`SELECT at FROM events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var at string
		if err := rows.Scan(&at); err != nil {
			t.Fatal(err)
		}
		got = append(got, at)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the migration:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var ordered string
	s.Reader().QueryRow(`SELECT group_concat(seq, ',') FROM (SELECT seq FROM events WHERE seq < 7 ORDER BY at)`).Scan(&ordered)
	if ordered != "1,2,3,4,5,6" {
		t.Errorf("ORDER BY at after the migration: %s", ordered)
	}
}
