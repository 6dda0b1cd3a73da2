package ledger

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Row is a table row by column name. Values are what the SQLite driver returns: int64, float64,
// string, []byte or nil.
type Row map[string]any

// ScanRows reads every row of rows and closes it.
func ScanRows(rows *sql.Rows) ([]Row, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []Row
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make(Row, len(cols))
		for i, c := range cols {
			r[c] = vals[i]
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Str returns a text column, "" for NULL.
func (r Row) Str(col string) string {
	switch v := r[col].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// NullStr returns a text column as a pointer, nil for NULL.
func (r Row) NullStr(col string) *string {
	if r[col] == nil {
		return nil
	}
	s := r.Str(col)
	return &s
}

// Float returns a numeric column.
func (r Row) Float(col string) float64 {
	switch v := r[col].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	return 0
}

// json encodes the row image for the ledger; nil stays NULL. Keys are sorted by encoding/json, so
// equal rows encode to equal text.
func (r Row) json() any {
	if r == nil {
		return nil
	}
	b, err := json.Marshal(map[string]any(r))
	if err != nil {
		panic(fmt.Sprintf("ledger: row image: %v", err)) // only driver values are stored
	}
	return string(b)
}

// decodeRow reads a row image back, keeping integers as int64.
func decodeRow(s sql.NullString) (Row, error) {
	if !s.Valid {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader([]byte(s.String)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("ledger: row image: %w", err)
	}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				m[k] = i
			} else if f, err := n.Float64(); err == nil {
				m[k] = f
			}
		}
	}
	return Row(m), nil
}
