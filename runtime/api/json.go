package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
)

// maxBody caps request bodies; a task's page is the largest thing a request carries.
const maxBody = 1 << 20

// errorBody is every error answer: one sentence, and for a refused task move the moves allowed; a
// refused sealed box adds its reason's name (seal_open, seal_replay, …).
type errorBody struct {
	Error   string           `json:"error"`
	Code    string           `json:"code,omitempty"`
	Allowed []records.Status `json:"allowed,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

// requestError is a bad request body, with its status and sentence.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

// decode reads one JSON object from the body into v: at most maxBody bytes, no unknown fields, no
// trailing data. Its error is a sentence for the person.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return &requestError{http.StatusUnsupportedMediaType, "Send the body as JSON (Content-Type: application/json)."}
	}
	return decodeFrom(http.MaxBytesReader(w, r.Body, maxBody), v)
}

// decodeFrom is decode's rules over a reader that is already capped: one JSON object, nothing after
// it, no unknown fields.
func decodeFrom(body io.Reader, v any) error {
	d := json.NewDecoder(body)
	var raw json.RawMessage
	if err := d.Decode(&raw); err != nil {
		return bodyError(err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return bodyError(err)
		}
		return &requestError{http.StatusBadRequest, "The body must hold one JSON value and nothing after it."}
	}
	// encoding/json takes null for a struct as "no fields", which would make a PATCH that changes
	// nothing, or a create that complains of a missing title, out of a body that is not an object;
	// and a target that is a map or raw JSON would take a list or a string. Every body is an object.
	if kind := jsonKind(raw); kind != "object" {
		return &requestError{http.StatusBadRequest, fmt.Sprintf("The body must be a JSON object, not %s.", kind)}
	}
	inner := json.NewDecoder(bytes.NewReader(raw))
	inner.DisallowUnknownFields()
	if err := inner.Decode(v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			typ.Field = jsonPath(reflect.TypeOf(v), typ.Field)
		}
		return bodyError(err)
	}
	return nil
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
			t = jsonField(t, part)
		} else {
			t = nil
		}
		out = append(out, part)
	}
	return strings.Join(out, ".")
}

// jsonField is the type of struct t's field named name in JSON, or nil.
func jsonField(t reflect.Type, name string) reflect.Type {
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name || (tag == "" && strings.EqualFold(f.Name, name)) {
			return f.Type
		}
	}
	return nil
}

// jsonKind names the kind of one valid JSON value as encoding/json's errors do.
func jsonKind(raw []byte) string {
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

func bodyError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		mbe *http.MaxBytesError
		bad = http.StatusBadRequest
	)
	switch {
	case errors.As(err, &mbe):
		// 400 like every other body that cannot be taken, so a client needs one rule for them all.
		return &requestError{bad, "The body is larger than " + size(mbe.Limit) + "."}
	case errors.Is(err, io.EOF):
		return &requestError{bad, "The body is empty; send a JSON object."}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &requestError{bad, "The body is not valid JSON: it ends too soon."}
	case errors.As(err, &syn):
		return &requestError{bad, fmt.Sprintf("The body is not valid JSON (at byte %d).", syn.Offset)}
	case errors.As(err, &typ):
		want, value := jsonType(typ.Type), typ.Value
		if n, ok := strings.CutPrefix(value, "number "); ok { // 1.5 or -1 for a whole number's field
			want, value = "a whole number", n
		}
		if typ.Field == "" {
			return &requestError{bad, fmt.Sprintf("The body must be %s, not %s.", want, value)}
		}
		return &requestError{bad, fmt.Sprintf("Field %q must be %s, not %s.", typ.Field, want, value)}
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &requestError{bad, fmt.Sprintf("Unknown field %s.", f)}
	}
	// Anything else encoding/json says is about Go types, not about what the person sent.
	return &requestError{bad, "The body is not the JSON this route takes."}
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

// writeErr answers with the status and sentence err calls for.
func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	var (
		re  *requestError
		inv *records.InvalidError
		nf  *records.NotFoundError
		mv  *records.MoveError
		cf  *ledger.ConflictError
		ai  *assistant.InputError
		anf *assistant.NotFoundError
		acf *assistant.ConflictError
		ae  *assistant.ApplyError
	)
	switch {
	case errors.As(err, &re):
		writeError(w, re.status, re.msg)
	case errors.As(err, &ai):
		writeError(w, http.StatusBadRequest, ai.Msg)
	case errors.As(err, &anf):
		writeError(w, http.StatusNotFound, anf.Error())
	case errors.As(err, &acf):
		writeError(w, http.StatusConflict, acf.Msg)
	case errors.As(err, &ae):
		// The receipts say which call failed and which were not attempted.
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"error": ae.Msg, "tools": ae.Tools})
	case errors.As(err, &inv):
		writeError(w, http.StatusBadRequest, inv.Msg)
	case errors.As(err, &nf):
		writeError(w, http.StatusNotFound, nf.Error())
	case errors.As(err, &mv):
		writeJSON(w, http.StatusConflict, errorBody{Error: mv.Error(), Allowed: mv.Allowed})
	case errors.As(err, &cf), errors.Is(err, ledger.ErrNothing):
		writeError(w, http.StatusConflict, err.Error())
	default:
		s.fail(w, r, err)
	}
}

// fail answers 500 and logs the cause, which the person does not need to see.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client went away
	}
	s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "Something went wrong inside Ensemble; its log has the details.")
}

// size is a body limit as a person reads it: KB up to 2 MB, whole MB above.
func size(limit int64) string {
	if limit < 2<<20 {
		return fmt.Sprintf("%d KB", limit>>10)
	}
	return fmt.Sprintf("%d MB", limit>>20)
}

// readBody reads a body of at most limit bytes; a longer one is bodyError's sentence.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	if err != nil {
		return nil, bodyError(err)
	}
	return raw, nil
}
