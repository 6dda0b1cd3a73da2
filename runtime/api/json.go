package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/httpin"
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

// writeErr answers with the status and sentence err calls for.
func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	var (
		re  *httpin.Error
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
		writeError(w, re.Status, re.Msg)
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
