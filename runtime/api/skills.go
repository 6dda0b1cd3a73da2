package api

import (
	"net/http"

	"github.com/ensemblework/ensemble/runtime/skills"
)

// mountSkills adds the routes of the person's personal skills (mounted with the assistant's):
//
//	GET    /api/assistant/skills          {skills: [{name, title, updatedAt}]}, by name
//	GET    /api/assistant/skills/{name}   one skill with its body
//	PUT    /api/assistant/skills/{name}   {title, body}: saves it, replacing one of that name
//	DELETE /api/assistant/skills/{name}   deletes it
func (s *Server) mountSkills(api func(string, http.HandlerFunc)) {
	api("GET /api/assistant/skills", s.listSkills)
	api("GET /api/assistant/skills/{name}", s.getSkill)
	api("PUT /api/assistant/skills/{name}", s.putSkill)
	api("DELETE /api/assistant/skills/{name}", s.deleteSkill)
}

func (s *Server) listSkills(w http.ResponseWriter, r *http.Request) {
	sks, err := s.opts.Assistant.Skills(r.Context())
	s.answer(w, r, http.StatusOK, map[string]any{"skills": sks}, err)
}

func (s *Server) getSkill(w http.ResponseWriter, r *http.Request) {
	sk, err := s.opts.Assistant.Skill(r.Context(), r.PathValue("name"))
	s.answer(w, r, http.StatusOK, sk, err)
}

func (s *Server) putSkill(w http.ResponseWriter, r *http.Request) {
	var in skills.Input
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	sk, err := s.opts.Assistant.PutSkill(r.Context(), r.PathValue("name"), in)
	s.answer(w, r, http.StatusOK, sk, err)
}

func (s *Server) deleteSkill(w http.ResponseWriter, r *http.Request) {
	err := s.opts.Assistant.DeleteSkill(r.Context(), r.PathValue("name"))
	s.answer(w, r, http.StatusNoContent, nil, err)
}
