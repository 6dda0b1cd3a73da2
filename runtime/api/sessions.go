package api

import (
	"net/http"
	"strconv"

	"github.com/ensemblework/ensemble/runtime/sessions"
)

// mountSessions adds the routes of agent sessions:
//
//	GET    /api/agent/sessions          [taskId] [q] [limit]: newest first
//	GET    /api/agent/sessions/{id}     the session (any of its run ids finds it) with its runs
//	DELETE /api/agent/sessions/{id}     marks it deleted: it is never reopened
func (s *Server) mountSessions(api func(string, http.HandlerFunc)) {
	if s.opts.Sessions == nil {
		return
	}
	api("GET /api/agent/sessions", s.listSessions)
	api("GET /api/agent/sessions/{id}", s.getSession)
	api("DELETE /api/agent/sessions/{id}", s.deleteSession)
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := sessions.Filter{TaskID: q.Get("taskId"), Q: q.Get("q")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			writeError(w, http.StatusBadRequest, "limit must be a number from 1 to 200.")
			return
		}
		f.Limit = n
	}
	list, err := s.opts.Sessions.List(r.Context(), f)
	if err != nil {
		s.answer(w, r, 0, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": list})
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	d, err := s.opts.Sessions.Get(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, d, err)
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	ss, err := s.opts.Sessions.Delete(r.Context(), r.PathValue("id"), person)
	s.answer(w, r, http.StatusOK, ss, err)
}
