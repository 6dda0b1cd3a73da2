package secrets

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// MinHidden is the shortest value a Redactor hides: hiding every "a" or "42" in a log would make it
// unreadable and tell a reader the value anyway.
const MinHidden = 4

// Redactor replaces every value the store knows, as written or in the encodings a program passes
// it on in (JSON string, URL, base64), with "[secret NAME]". It is safe for concurrent
// use; Hide takes no lock, so logs and traces can call it on every line.
type Redactor struct {
	r atomic.Pointer[strings.Replacer] // nil while there is nothing to hide

	mu     sync.Mutex // guards the following field
	values map[string]string
}

// NewRedactor returns a Redactor that hides nothing yet.
func NewRedactor() *Redactor { return &Redactor{values: map[string]string{}} }

// Hide returns s with every known value replaced by "[secret NAME]".
func (d *Redactor) Hide(s string) string {
	if d == nil {
		return s
	}
	r := d.r.Load()
	if r == nil || s == "" {
		return s
	}
	return r.Replace(s)
}

// set remembers (or, with value "", forgets) name's value.
func (d *Redactor) set(name, value string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if value == "" {
		delete(d.values, name)
	} else {
		d.values[name] = value
	}
	d.rebuildLocked()
}

// rebuildLocked makes the replacer again. Longer values come first, so where one value contains
// another the whole of it is hidden under its own name.
func (d *Redactor) rebuildLocked() {
	type pair struct{ name, value string }
	var ps []pair
	for n, v := range d.values {
		if len(v) < MinHidden {
			continue
		}
		for _, f := range encodings(v) {
			ps = append(ps, pair{n, f})
		}
	}
	if len(ps) == 0 {
		d.r.Store(nil)
		return
	}
	sort.Slice(ps, func(i, j int) bool {
		if len(ps[i].value) != len(ps[j].value) {
			return len(ps[i].value) > len(ps[j].value)
		}
		return ps[i].name < ps[j].name
	})
	args := make([]string, 0, 2*len(ps))
	for _, p := range ps {
		args = append(args, p.value, "[secret "+p.name+"]")
	}
	d.r.Store(strings.NewReplacer(args...))
}

// encodings are v and the forms it takes when a program quotes it in JSON, puts it in a URL or
// base64-encodes it, each once.
func encodings(v string) []string {
	q, _ := json.Marshal(v)
	forms := []string{v, string(q[1 : len(q)-1]), url.QueryEscape(v), url.PathEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v))}
	sort.Strings(forms)
	return slices.Compact(forms)
}
