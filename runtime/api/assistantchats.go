package api

import (
	"net/http"
	"strconv"

	"github.com/ensemblework/ensemble/runtime/assistant"
)

func (s *Server) listConversations(w http.ResponseWriter, r *http.Request) {
	limit := 0
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			writeError(w, http.StatusBadRequest, "limit must be a number from 1 to 200.")
			return
		}
		limit = n
	}
	list, err := s.opts.Assistant.List(r.Context(), limit)
	s.answer(w, r, http.StatusOK, map[string]any{"conversations": list}, err)
}

func (s *Server) getConversation(w http.ResponseWriter, r *http.Request) {
	c, err := s.opts.Assistant.Conversation(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, c, err)
}

func (s *Server) deleteConversation(w http.ResponseWriter, r *http.Request) {
	err := s.opts.Assistant.Delete(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusNoContent, nil, err)
}

func (s *Server) stopConversation(w http.ResponseWriter, r *http.Request) {
	err := s.opts.Assistant.Stop(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusNoContent, nil, err)
}

func (s *Server) assistantSettings(w http.ResponseWriter, r *http.Request) {
	st, err := s.opts.Assistant.Settings(r.Context())
	s.answer(w, r, http.StatusOK, st, err)
}

func (s *Server) setAssistantSettings(w http.ResponseWriter, r *http.Request) {
	var c assistant.SettingsChange
	if err := decode(w, r, &c); err != nil {
		s.writeErr(w, r, err)
		return
	}
	st, err := s.opts.Assistant.SetSettings(r.Context(), c)
	s.answer(w, r, http.StatusOK, st, err)
}
