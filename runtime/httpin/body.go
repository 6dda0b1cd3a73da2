package httpin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
)

// JSONMediaType reports whether a Content-Type header names JSON. Media types and their parameters'
// names are compared without case (RFC 9110 §8.3.1), so "Application/JSON; charset=UTF-8" is JSON;
// a charset other than UTF-8 is not, since JSON is UTF-8 (RFC 8259 §8.1).
func JSONMediaType(ct string) bool {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// ReadBody reads a request's body of at most limit bytes. A body sent as anything but JSON (by its
// Content-Type; none is taken for JSON) is refused with 415, a longer one with BodyError's sentence.
// w, when given, is told to close the connection once the limit is passed.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !JSONMediaType(ct) {
		return nil, &Error{http.StatusUnsupportedMediaType, "Send the body as JSON (Content-Type: application/json)."}
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, BodyError(err)
	}
	return raw, nil
}

// Decode reads one JSON object from raw into v: nothing after it, no unknown fields, each field
// once and named exactly as v names it, text in UTF-8 without NUL characters. Its error is an
// [*Error] with a sentence for the person.
func Decode(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	var one json.RawMessage
	if err := d.Decode(&one); err != nil {
		return BodyError(err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return &Error{http.StatusBadRequest, "The body must hold one JSON value and nothing after it."}
	}
	// encoding/json takes null for a struct as "no fields", which would make a PATCH that changes
	// nothing, or a create that complains of a missing title, out of a body that is not an object;
	// and a target that is a map or raw JSON would take a list or a string. Every body is an object.
	if kind := Kind(one); kind != "object" {
		return &Error{http.StatusBadRequest, fmt.Sprintf("The body must be a JSON object, not %s.", kind)}
	}
	if err := check(one, reflect.TypeOf(v)); err != nil {
		return err
	}
	inner := json.NewDecoder(bytes.NewReader(one))
	inner.DisallowUnknownFields()
	if err := inner.Decode(v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			typ.Field = jsonPath(reflect.TypeOf(v), typ.Field)
		}
		return BodyError(err)
	}
	return nil
}

// CheckJSON applies Decode's rules that need no Go type to raw, which may be any JSON value: each
// field of an object once, text in UTF-8 without NUL characters. It is for bodies another decoder
// reads (the MCP SDK's), so that both servers refuse the same bodies.
func CheckJSON(raw []byte) error {
	return check(raw, nil)
}

// BodyError is the sentence for a body that could not be read or decoded.
func BodyError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		mbe *http.MaxBytesError
		bad = http.StatusBadRequest
	)
	switch {
	case errors.As(err, &mbe):
		// 400 like every other body that cannot be taken, so a client needs one rule for them all.
		return &Error{bad, "The body is larger than " + size(mbe.Limit) + "."}
	case errors.Is(err, io.EOF):
		return &Error{bad, "The body is empty; send a JSON object."}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{bad, "The body is not valid JSON: it ends too soon."}
	case errors.As(err, &syn):
		return &Error{bad, fmt.Sprintf("The body is not valid JSON (at byte %d).", syn.Offset)}
	case errors.As(err, &typ):
		want, value := jsonType(typ.Type), typ.Value
		if n, ok := strings.CutPrefix(value, "number "); ok { // 1.5 or -1 for a whole number's field
			want, value = "a whole number", n
		}
		if typ.Field == "" {
			return &Error{bad, fmt.Sprintf("The body must be %s, not %s.", want, value)}
		}
		return &Error{bad, fmt.Sprintf("Field %q must be %s, not %s.", typ.Field, want, value)}
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &Error{bad, fmt.Sprintf("Unknown field %s.", f)}
	}
	// Anything else encoding/json says is about Go types, not about what the person sent.
	return &Error{bad, "The body is not the JSON this route takes."}
}

// jsonPath is encoding/json's path to a field ("AssignRequest.settings.maxTurns") as the person
// wrote it: without the names of embedded structs, which are Go's and not in the JSON.
func jsonPath(t reflect.Type, path string) string {
	var out []string
	for part := range strings.SplitSeq(path, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t != nil && t.Kind() == reflect.Struct {
			if f, ok := t.FieldByName(part); ok && f.Anonymous && f.Tag.Get("json") == "" {
				t = f.Type
				continue
			}
			if f, ok := jsonFields(t)[part]; ok {
				t = f
			} else {
				t = nil
			}
		} else {
			t = nil
		}
		out = append(out, part)
	}
	return strings.Join(out, ".")
}

// Kind names the kind of one valid JSON value as encoding/json's errors do.
func Kind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// jsonType names a Go type as the JSON a person should send.
func jsonType(t reflect.Type) string {
	if t == nil {
		return "something else"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "text" // base64
		}
		return "a list"
	case reflect.String:
		return "text"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "something else"
}

// size is a body limit as a person reads it: KB up to 2 MB, whole MB above.
func size(limit int64) string {
	if limit < 2<<20 {
		return fmt.Sprintf("%d KB", limit>>10)
	}
	return fmt.Sprintf("%d MB", limit>>20)
}
