package httpin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"
)

// check walks raw for what encoding/json would take without a word: a field given twice (it keeps
// the last, so two readers of one body can disagree on what it says), a field named in another case
// than the Go field's (it matches names without case), text that is not UTF-8 (it puts U+FFFD in
// its place, as it does for an escaped half of a surrogate pair), and NUL characters (which cut a
// string short in C, SQLite's text functions and terminals). t is the Go type raw is decoded into,
// or nil for the rules that need none.
func check(raw []byte, t reflect.Type) error {
	if !utf8.Valid(raw) {
		return &Error{http.StatusBadRequest, "The body is not valid UTF-8; send JSON text in UTF-8."}
	}
	c := checker{d: json.NewDecoder(bytes.NewReader(raw)), raw: raw}
	return c.value(t, "")
}

type checker struct {
	d   *json.Decoder
	raw []byte
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// shape is t as the walk follows it: without pointers, and nil where encoding/json would not match
// fields by name (an interface, raw JSON, a type that decodes itself).
func shape(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	return t
}

func (c *checker) value(t reflect.Type, path string) error {
	t = shape(t)
	start := c.d.InputOffset()
	tok, err := c.d.Token()
	if err != nil {
		return BodyError(err)
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			var elem reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				elem = t.Elem()
			}
			for c.d.More() {
				if err := c.value(elem, path); err != nil {
					return err
				}
			}
			_, err := c.d.Token()
			return bodyErr(err)
		}
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		seen := map[string]bool{}
		for c.d.More() {
			kstart := c.d.InputOffset()
			ktok, err := c.d.Token()
			if err != nil {
				return BodyError(err)
			}
			key, _ := ktok.(string)
			p := key
			if path != "" {
				p = path + "." + key
			}
			if err := c.text(key, kstart, "", true); err != nil {
				return err
			}
			if seen[key] {
				return &Error{http.StatusBadRequest, fmt.Sprintf("Field %q is given twice; send each field once.", p)}
			}
			seen[key] = true
			var child reflect.Type
			switch {
			case fields != nil:
				ft, ok := fields[key]
				if !ok {
					for name := range fields {
						if strings.EqualFold(name, key) {
							return &Error{http.StatusBadRequest, fmt.Sprintf("Field %q must be written %q: field names are case-sensitive.", p, joinPath(path, name))}
						}
					}
				}
				child = ft
			case t != nil && t.Kind() == reflect.Map:
				child = t.Elem()
			}
			if err := c.value(child, p); err != nil {
				return err
			}
		}
		_, err := c.d.Token()
		return bodyErr(err)
	case string:
		return c.text(v, start, path, false)
	}
	return nil
}

func bodyErr(err error) error {
	if err != nil {
		return BodyError(err)
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// text checks one decoded string, the token that began at offset start: no NUL, and no U+FFFD the
// body did not itself hold (encoding/json's stand-in for an escaped lone surrogate).
func (c *checker) text(s string, start int64, path string, isKey bool) error {
	if strings.IndexByte(s, 0) >= 0 {
		switch {
		case isKey:
			return &Error{http.StatusBadRequest, "A field name in the body holds a NUL character (\\u0000), which Ensemble does not take."}
		case path == "":
			return &Error{http.StatusBadRequest, "The body holds a NUL character (\\u0000), which Ensemble does not take."}
		}
		return &Error{http.StatusBadRequest, fmt.Sprintf("Field %q holds a NUL character (\\u0000), which Ensemble does not take.", path)}
	}
	if strings.ContainsRune(s, utf8.RuneError) {
		tok := c.raw[start:c.d.InputOffset()]
		if !bytes.Contains(tok, []byte("\uFFFD")) && !bytes.Contains(bytes.ToLower(tok), []byte(`\ufffd`)) {
			return &Error{http.StatusBadRequest, "The body is not valid UTF-8: it escapes half of a surrogate pair; send JSON text in UTF-8."}
		}
	}
	return nil
}

// jsonFields are the fields encoding/json decodes a struct's object into, by their names in JSON:
// a tag's name, else the Go name. The exported fields of an embedded struct without a tag name are
// the outer struct's own, unless it has one of that name nearer the top.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	depth := map[string]int{}
	var walk func(t reflect.Type, d int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, d int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, d+1, seen)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if old, ok := depth[name]; !ok || d < old {
				out[name], depth[name] = f.Type, d
			}
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	return out
}
