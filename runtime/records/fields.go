package records

import (
	"context"
	"database/sql"
	"strings"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
)

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// text trims s and checks its length in characters.
func text(field, s string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if required && s == "" {
		return "", problem.Invalid("The %s cannot be empty.", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return "", problem.Invalid("The %s is %d characters long; the most is %d.", field, n, max)
	}
	if !utf8.ValidString(s) {
		return "", problem.Invalid("The %s is not valid UTF-8 text.", field)
	}
	return s, nil
}

func labels(in []string) ([]string, error) {
	if len(in) > 20 {
		return nil, problem.Invalid("A task can have at most 20 labels.")
	}
	out := make([]string, 0, len(in))
	for _, l := range in {
		l, err := text("label", l, 40, true)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return dedupe(out), nil
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(in))
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// nullable turns an optional text into a column value.
func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// textField is one optional text input and the column it goes to.
type textField struct {
	name, column string
	in           Opt[string]
	max          int
	required     bool
}

// fieldRow checks the text fields that are set and returns their columns.
func fieldRow(fields ...textField) (ledger.Row, error) {
	row := ledger.Row{}
	for _, f := range fields {
		if !f.in.Set {
			continue
		}
		v, err := text(f.name, f.in.V, f.max, f.required)
		if err != nil {
			return nil, err
		}
		row[f.column] = v
	}
	return row, nil
}
