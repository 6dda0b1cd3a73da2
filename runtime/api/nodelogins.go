package api

import (
	"net/http"

	"github.com/ensemblework/ensemble/runtime/node"
)

// The login card's own routes (spec 002 §8.16.1) and the sites whose captures the owner sees
// first (§8.14, held captures):
//
//	GET  /api/node/logins/{messageId}    the card's state and what it offers (local, takeover, done, decline)
//	POST /api/node/logins/{messageId}    {action: local|done|check|decline}; an ended sign-in is 409
//	GET  /api/node/preview-sites         {sites}
//	PUT  /api/node/preview-sites         {sites}: replaces them
//	GET  /api/node/never-sites           {sites}: the sites never captured (no screenshot, no run's live picture)
//	PUT  /api/node/never-sites           {sites}: replaces them; a site takes one rule, so it leaves the other list
//
// A held capture opens at GET /api/node/messages/{id}/files/{fileId} from its media_preview card
// and is released or discarded at POST /api/node/approvals/{messageId} {decision: approve|discard},
// all of the card's files at once, or one at a time:
//
//	POST /api/node/evidence/{fileId}/release   shown in the chat at once; the card settles with its last file
//	POST /api/node/evidence/{fileId}/discard   deleted
func (s *Server) mountNodeLogins(api func(string, http.HandlerFunc)) {
	api("GET /api/node/logins/{messageId}", s.getLogin)
	api("POST /api/node/logins/{messageId}", s.answerLogin)
	api("GET /api/node/preview-sites", s.captureSites(node.SitePreview))
	api("PUT /api/node/preview-sites", s.setCaptureSites(node.SitePreview))
	api("GET /api/node/never-sites", s.captureSites(node.SiteNever))
	api("PUT /api/node/never-sites", s.setCaptureSites(node.SiteNever))
	api("POST /api/node/evidence/{fileId}/release", s.answerHeldFile(node.Approve))
	api("POST /api/node/evidence/{fileId}/discard", s.answerHeldFile(node.Discard))
}

func (s *Server) answerHeldFile(decision string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m, err := s.opts.Nodes.AnswerHeldFile(r.Context(), r.PathValue("fileId"), decision, s.cardAnswerer(r))
		s.answer(w, r, http.StatusOK, m, err)
	}
}

func (s *Server) getLogin(w http.ResponseWriter, r *http.Request) {
	v, err := s.opts.Nodes.Login(r.Context(), r.PathValue("messageId"))
	s.answer(w, r, http.StatusOK, v, err)
}

func (s *Server) answerLogin(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Action string `json:"action"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	m, err := s.opts.Nodes.AnswerLogin(r.Context(), r.PathValue("messageId"), in.Action, s.cardAnswerer(r))
	s.answer(w, r, http.StatusOK, m, err)
}

func (s *Server) captureSites(rule string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sites, err := s.opts.Nodes.CaptureSites(r.Context(), rule)
		if sites == nil {
			sites = []string{}
		}
		s.answer(w, r, http.StatusOK, map[string]any{"sites": sites}, err)
	}
}

func (s *Server) setCaptureSites(rule string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Sites []string `json:"sites"`
		}
		if err := decode(w, r, &in); err != nil {
			s.writeErr(w, r, err)
			return
		}
		sites, err := s.opts.Nodes.SetCaptureSites(r.Context(), rule, in.Sites)
		if sites == nil {
			sites = []string{}
		}
		s.answer(w, r, http.StatusOK, map[string]any{"sites": sites}, err)
	}
}
