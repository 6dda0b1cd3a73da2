package store

import (
	"database/sql/driver"
	"fmt"
	"time"
)

// TimeLayout is how every table keeps a moment: UTC, to the nanosecond, always the same width, so
// that the text's order is the time's order (ORDER BY created_at) and SQLite's own date functions
// read it. RFC 3339 with trimmed nanoseconds, as time.RFC3339Nano writes, does not sort as text:
// "…:05Z" sorts after "…:05.5Z".
const TimeLayout = "2006-01-02T15:04:05.000000000Z"

// Stamp is t as a table keeps it.
func Stamp(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads a stamp, and the RFC 3339 shapes rows written before there was one layout.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: %q is not a time: %w", s, err)
	}
	return t.UTC(), nil
}

// Time is a moment in a table's column: Scan reads a stamp (or NULL, as the zero Time), Value
// writes one (the zero Time as NULL).
type Time struct{ time.Time }

// TimeOf is t as a column's value.
func TimeOf(t time.Time) Time { return Time{t} }

// Value writes the stamp; the zero Time is NULL.
func (t Time) Value() (driver.Value, error) {
	if t.IsZero() {
		return nil, nil
	}
	return Stamp(t.Time), nil
}

// Scan reads a stamp; NULL is the zero Time. Text that is not a time is an error, not a zero.
func (t *Time) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		t.Time = time.Time{}
		return nil
	case string:
		return t.parse(v)
	case []byte:
		return t.parse(string(v))
	case time.Time:
		t.Time = v.UTC()
		return nil
	}
	return fmt.Errorf("store: a %T is not a time", src)
}

func (t *Time) parse(s string) error {
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	v, err := ParseTime(s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// Ptr is t as a *time.Time: nil for the zero Time (a column that is NULL).
func (t Time) Ptr() *time.Time {
	if t.IsZero() {
		return nil
	}
	v := t.Time
	return &v
}

// ReadTime is a column's stamp as a time; text that is not one reads as the zero time. Scan into
// a [Time] where a bad value must surface as an error.
func ReadTime(s string) time.Time {
	t, _ := ParseTime(s)
	return t
}
