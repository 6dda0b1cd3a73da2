package api

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ensemblework/ensemble/runtime/httpin"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// routineHookPath is where a routine's webhook is called, with the routine's id after it.
const routineHookPath = "/api/node/hooks/routines/"

// maxHookBody caps a webhook's body; the node keeps its first node.MaxHookBody characters.
const maxHookBody = 256 << 10

func (s *Server) mountRoutines(api func(string, http.HandlerFunc)) {
	api("GET /api/node/routines", s.listRoutines)
	api("POST /api/node/routines", s.createRoutine)
	api("GET /api/node/routines/{id}", s.getRoutine)
	api("PATCH /api/node/routines/{id}", s.patchRoutine)
	api("DELETE /api/node/routines/{id}", s.deleteRoutine)
	api("POST /api/node/routines/{id}/run", s.runRoutine)
	api("POST /api/node/routines/{id}/token", s.renewRoutineToken)
	api("GET /api/node/routines/{id}/runs", s.routineRuns)
}

// mountRoutineHook adds a routine's webhook outside the launch token's guard: webhooks come from
// other programs, through the relay or on the home runner, and answer on the routine's own token
// (spec 002 §6.5).
func (s *Server) mountRoutineHook(mux *http.ServeMux) {
	if s.opts.Nodes == nil {
		return
	}
	mux.HandleFunc("POST /api/node/hooks/routines/{id}", s.routineHook)
}

func (s *Server) listRoutines(w http.ResponseWriter, r *http.Request) {
	rs, err := s.opts.Nodes.Routines(r.Context(), r.URL.Query().Get("nodeId"))
	s.answer(w, r, http.StatusOK, map[string]any{"routines": rs}, err)
}

func (s *Server) createRoutine(w http.ResponseWriter, r *http.Request) {
	var in node.NewRoutine
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	rt, err := s.opts.Nodes.CreateRoutine(r.Context(), in)
	s.answer(w, r, http.StatusCreated, rt, err)
}

func (s *Server) getRoutine(w http.ResponseWriter, r *http.Request) {
	rt, err := s.opts.Nodes.Routine(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, rt, err)
}

func (s *Server) patchRoutine(w http.ResponseWriter, r *http.Request) {
	var c node.RoutineChange
	if err := decode(w, r, &c); err != nil {
		s.writeErr(w, r, err)
		return
	}
	rt, err := s.opts.Nodes.UpdateRoutine(r.Context(), r.PathValue("id"), c)
	s.answer(w, r, http.StatusOK, rt, err)
}

func (s *Server) deleteRoutine(w http.ResponseWriter, r *http.Request) {
	s.answer(w, r, http.StatusNoContent, nil, s.opts.Nodes.DeleteRoutine(r.Context(), r.PathValue("id")))
}

func (s *Server) runRoutine(w http.ResponseWriter, r *http.Request) {
	run, err := s.opts.Nodes.RunRoutine(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusCreated, run, err)
}

func (s *Server) renewRoutineToken(w http.ResponseWriter, r *http.Request) {
	rt, err := s.opts.Nodes.RenewRoutineToken(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, rt, err)
}

func (s *Server) routineRuns(w http.ResponseWriter, r *http.Request) {
	limit, ok := queryInt(w, r, "limit")
	if !ok {
		return
	}
	runs, err := s.opts.Nodes.RoutineRuns(r.Context(), r.PathValue("id"), int(limit))
	s.answer(w, r, http.StatusOK, map[string]any{"runs": runs}, err)
}

// routineHook takes a call of a routine's webhook: Authorization: Bearer <token>, or ?token=. Every
// refusal is the same 403; a delivery id seen in the last day answers 200 and starts nothing.
func (s *Server) routineHook(w http.ResponseWriter, r *http.Request) {
	token, ok := httpin.Bearer(r.Header)
	if !ok {
		token = r.URL.Query().Get("token")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHookBody))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("A webhook's body is at most %d KB; send less.", maxHookBody>>10))
		return
	}
	delivery := ""
	for _, h := range []string{"X-GitHub-Delivery", "Idempotency-Key", "X-Request-Id"} {
		if delivery = strings.TrimSpace(r.Header.Get(h)); delivery != "" {
			break
		}
	}
	res, err := s.opts.Nodes.Deliver(r.Context(), r.PathValue("id"), token, node.HookDelivery{ID: delivery, Body: body})
	switch {
	case node.IsHookRefused(err):
		writeError(w, http.StatusForbidden, problem.Sentence(err))
	case err != nil:
		s.writeErr(w, r, err)
	case res.Duplicate:
		writeJSON(w, http.StatusOK, res)
	default:
		writeJSON(w, http.StatusAccepted, res)
	}
}
