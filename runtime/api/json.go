package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/bridge/workspace"
	"github.com/ensemblework/ensemble/runtime/httpin"
	"github.com/ensemblework/ensemble/runtime/problem"
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

// decode reads one JSON object from the body into v by httpin's rules (at most maxBody bytes, sent
// as JSON, one object, no unknown fields, each field once and in its own case, UTF-8 text without
// NUL). Its error is a sentence for the person.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	raw, err := httpin.ReadBody(w, r, maxBody)
	if err != nil {
		return err
	}
	return httpin.Decode(raw, v)
}

// writeErr answers with the status and sentence err calls for: a request httpin refused, an Apply's
// receipts, a bridge refusal, a refused task move with the moves allowed, or any other problem by
// its kind (statusOf). Anything else is a failure inside Ensemble.
func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	var (
		re  *httpin.Error
		ae  *assistant.ApplyError
		ref *workspace.Refusal
		mv  *records.MoveError
	)
	switch {
	case errors.As(err, &re):
		writeError(w, re.Status, re.Msg)
	case errors.As(err, &ae):
		// The receipts say which call failed and which were not attempted.
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"error": ae.Msg, "tools": ae.Tools})
	case errors.As(err, &ref):
		body := map[string]any{"error": ref.Msg}
		for k, x := range ref.Extra {
			body[k] = x
		}
		writeJSON(w, ref.Status, body)
	case errors.As(err, &mv):
		writeJSON(w, http.StatusConflict, errorBody{Error: mv.Error(), Allowed: mv.Allowed})
	case problem.KindOf(err) != problem.KindNone:
		writeError(w, statusOf(problem.KindOf(err)), problem.Sentence(err))
	default:
		s.fail(w, r, err)
	}
}

// statusOf is the HTTP status for a problem of kind k: the one place a kind becomes a status.
func statusOf(k problem.Kind) int {
	switch k {
	case problem.KindInvalid:
		return http.StatusBadRequest
	case problem.KindNotFound:
		return http.StatusNotFound
	case problem.KindConflict:
		return http.StatusConflict
	case problem.KindForbidden:
		return http.StatusForbidden
	case problem.KindTooMany:
		return http.StatusTooManyRequests
	case problem.KindUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// fail answers 500 and logs the cause, which the person does not need to see.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client went away
	}
	s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "Something went wrong inside Ensemble; its log has the details.")
}
