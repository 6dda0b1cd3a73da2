package events

import (
	"context"
	"fmt"
	"strings"
)

// Filter selects events by kind and subject, so one stream serves the board (every family it
// shows) and a run's trace (family "run", subject the run). The zero Filter selects everything.
type Filter struct {
	// Kinds are kinds ("run.started") or families ending in a dot ("run."); none selects every kind.
	Kinds []string
	// Subject, when set, is the one subject selected (a run's id).
	Subject string
}

// ParseFilter reads a filter from the comma-separated kinds and families a client asked for and a
// subject. It refuses a kind that could never match, so a typo is an error, not a silent stream.
func ParseFilter(kinds, subject string) (Filter, error) {
	f := Filter{Subject: subject}
	for _, k := range strings.Split(kinds, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if !validKind(k) {
			return Filter{}, fmt.Errorf("%q is not an event kind or family (such as run.started or run.)", k)
		}
		if !strings.Contains(k, ".") && k != string(KindReset) {
			k += "." // a bare family ("node") means its kinds, as "node." does, never a kind of its own
		}
		f.Kinds = append(f.Kinds, k)
	}
	return f, nil
}

// validKind reports whether k could name a kind or a family: lower-case words joined by dots.
func validKind(k string) bool {
	if k == "." || strings.HasPrefix(k, ".") || strings.Contains(k, "..") {
		return false
	}
	for _, r := range k {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Match reports whether the filter selects ev.
func (f Filter) Match(ev Event) bool {
	if f.Subject != "" && ev.Subject != f.Subject {
		return false
	}
	if len(f.Kinds) == 0 {
		return true
	}
	for _, k := range f.Kinds {
		if strings.HasSuffix(k, ".") && strings.HasPrefix(string(ev.Kind), k) || string(ev.Kind) == k {
			return true
		}
	}
	return false
}

// where is the filter as an SQL condition on the events table, with its arguments.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	if f.Subject != "" {
		conds = append(conds, "subject = ?")
		args = append(args, f.Subject)
	}
	if len(f.Kinds) > 0 {
		var or []string
		for _, k := range f.Kinds {
			if strings.HasSuffix(k, ".") {
				// substr, not LIKE, whose _ would match any character.
				or = append(or, "substr(kind, 1, ?) = ?")
				args = append(args, len(k), k)
			} else {
				or = append(or, "kind = ?")
				args = append(args, k)
			}
		}
		conds = append(conds, "("+strings.Join(or, " OR ")+")")
	}
	if len(conds) == 0 {
		return "1", nil
	}
	return strings.Join(conds, " AND "), args
}

// Select returns up to limit events the filter selects with seq greater than after, oldest first.
func Select(ctx context.Context, db Querier, f Filter, after int64, limit int) ([]Event, error) {
	where, args := f.where()
	rows, err := db.QueryContext(ctx,
		"SELECT seq, at, kind, subject, data FROM events WHERE seq > ? AND "+where+" ORDER BY seq LIMIT ?",
		append(append([]any{after}, args...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("events: read since %d: %w", after, err)
	}
	return scan(rows, after)
}
