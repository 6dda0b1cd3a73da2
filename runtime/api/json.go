package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	d := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	d.DisallowUnknownFields()
	var raw json.RawMessage
	if err := d.Decode(&raw); err != nil {
		return bodyError(err)
	}
	// encoding/json takes null for a struct as "no fields", which would make a PATCH that changes
	// nothing, or a create that complains of a missing title, out of a body that is not an object.
	if string(raw) == "null" {
		return &requestError{http.StatusBadRequest, "The body must be a JSON object, not null."}
	}
	inner := json.NewDecoder(bytes.NewReader(raw))
	inner.DisallowUnknownFields()
	if err := inner.Decode(v); err != nil {
		return bodyError(err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return bodyError(err)
		}
		return &requestError{http.StatusBadRequest, "The body must hold one JSON value and nothing after it."}
	}
	return nil
}

func bodyError(err error) error {
	var (
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		mbe  *http.MaxBytesError
		bad  = http.StatusBadRequest
		name string
	)
	switch {
	case errors.As(err, &mbe):
		// 400 like every other body that cannot be taken, so a client needs one rule for them all.
		return &requestError{bad, fmt.Sprintf("The body is larger than %d KB.", maxBody>>10)}
	case errors.Is(err, io.EOF):
		return &requestError{bad, "The body is empty; send a JSON object."}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &requestError{bad, "The body is not valid JSON: it ends too soon."}
	case errors.As(err, &syn):
		return &requestError{bad, fmt.Sprintf("The body is not valid JSON (at byte %d).", syn.Offset)}
	case errors.As(err, &typ):
		if name = typ.Field; name == "" {
			return &requestError{bad, fmt.Sprintf("The body must be a JSON %s, not %s.", jsonType(typ.Type.Kind().String()), typ.Value)}
		}
		return &requestError{bad, fmt.Sprintf("Field %q must be %s, not %s.", name, jsonType(typ.Type.String()), typ.Value)}
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &requestError{bad, fmt.Sprintf("Unknown field %s.", f)}
	}
	return &requestError{bad, "The body is not valid JSON: " + err.Error() + "."}
}

// jsonType names a Go type as the JSON a person should send.
func jsonType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.Contains(goType, "string"), strings.HasSuffix(goType, "Status"):
		return "text"
	case strings.Contains(goType, "float"), strings.Contains(goType, "int"):
		return "a number"
	case strings.Contains(goType, "bool"):
		return "true or false"
	case goType == "struct", strings.HasPrefix(goType, "map"):
		return "object"
	}
	return goType
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
