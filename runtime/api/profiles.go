package api

import (
	"context"
	"net/http"

	"github.com/ensemblework/ensemble/runtime/profiles"
)

// mountProfiles adds the routes of run profiles (mounted with the runs'):
//
//	GET    /api/agent/profiles             {profiles: [profile], seq}, the starred one first, then by name
//	POST   /api/agent/profiles             {name, agent, folder?, settings} → 201 the profile
//	PATCH  /api/agent/profiles/{id}        the fields given change (settings given replaces them) → the profile
//	DELETE /api/agent/profiles/{id}        → 204
//	POST   /api/agent/profiles/{id}/star   the default from now on; the one that was is unstarred → the profile
//	DELETE /api/agent/profiles/{id}/star   no longer the default → the profile
//
// Every change publishes profile.changed {id}.
func (s *Server) mountProfiles(api func(string, http.HandlerFunc)) {
	if s.opts.Profiles == nil {
		return
	}
	api("GET /api/agent/profiles", s.listProfiles)
	api("POST /api/agent/profiles", s.createProfile)
	api("PATCH /api/agent/profiles/{id}", s.updateProfile)
	api("DELETE /api/agent/profiles/{id}", s.deleteProfile)
	api("POST /api/agent/profiles/{id}/star", s.starProfile(true))
	api("DELETE /api/agent/profiles/{id}/star", s.starProfile(false))
}

func (s *Server) listProfiles(w http.ResponseWriter, r *http.Request) {
	s.answerList(w, r, "profiles", func(ctx context.Context) (any, error) { return s.opts.Profiles.List(ctx) })
}

func (s *Server) createProfile(w http.ResponseWriter, r *http.Request) {
	var in profiles.Input
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	p, err := s.opts.Profiles.Create(r.Context(), in)
	s.answer(w, r, http.StatusCreated, p, err)
}

func (s *Server) updateProfile(w http.ResponseWriter, r *http.Request) {
	var in profiles.Input
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	p, err := s.opts.Profiles.Update(r.Context(), r.PathValue("id"), in)
	s.answer(w, r, http.StatusOK, p, err)
}

func (s *Server) deleteProfile(w http.ResponseWriter, r *http.Request) {
	err := s.opts.Profiles.Delete(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusNoContent, nil, err)
}

func (s *Server) starProfile(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		act := s.opts.Profiles.Star
		if !on {
			act = s.opts.Profiles.Unstar
		}
		p, err := act(r.Context(), r.PathValue("id"))
		s.answer(w, r, http.StatusOK, p, err)
	}
}
