package api

import (
	"net/http"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

// A node's secret card (spec 002 §8.7.1–§8.7.2):
//
//	GET  /api/node/secrets/{messageId}   the secret's name, the node's reason and suggested origins, the seal key
//	POST /api/node/secrets/{messageId}   {sealed, allow?}: the value sealed for this computer, saved once
//
// Declining is POST /api/node/approvals/{messageId} {decision: "discard"}.

type secretCardView struct {
	MessageID string             `json:"messageId"`
	Status    string             `json:"status"`
	Name      string             `json:"name"`
	Why       string             `json:"why"`
	Allow     []string           `json:"allow"`
	Route     map[string]string  `json:"route"`
	SealKey   secrets.SealPublic `json:"sealKey"`
}

func (s *Server) getSecretCard(w http.ResponseWriter, r *http.Request) {
	m, c, err := s.opts.Nodes.SecretCard(r.Context(), r.PathValue("messageId"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	allow := c.Secret.Allow
	if allow == nil {
		allow = []string{}
	}
	writeJSON(w, http.StatusOK, secretCardView{MessageID: m.ID, Status: c.Status, Name: c.Secret.Name, Why: c.Secret.Why, Allow: allow,
		Route: map[string]string{"mode": "sealed"}, SealKey: s.opts.Secrets.SealKey()})
}

func (s *Server) answerSecretCard(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Sealed *secrets.Box `json:"sealed"`
		Allow  []string     `json:"allow"`
		Value  *string      `json:"value"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	id := r.PathValue("messageId")
	_, c, err := s.opts.Nodes.SecretCard(r.Context(), id)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	origin := r.Header.Get("Origin")
	switch {
	case in.Value != nil:
		writeSealError(w, "seal_required", "This computer takes only a sealed box, never a plain value; seal the value for its key.")
		return
	case in.Sealed == nil:
		writeSealError(w, "seal_shape", "The request holds no sealed box; send {sealed}.")
		return
	case origin == "":
		writeSealError(w, "seal_origin", "The request has no Origin; type the secret in Ensemble's own page.")
		return
	case c.Status != "pending":
		writeError(w, http.StatusConflict, "This card was already answered.")
		return
	}
	v, ok := s.openSealed(w, r, *in.Sealed, secrets.Expect{DecisionID: id, Name: c.Secret.Name, Origins: []string{origin}})
	if !ok {
		return
	}
	allow := in.Allow
	if allow == nil {
		allow = v.Allow
	}
	m, err := s.opts.Nodes.AnswerSecret(r.Context(), id, s.cardAnswerer(r), allow, func(name string, allow []string) error {
		return s.opts.Secrets.Set(r.Context(), name, secrets.Run, v.Value, allow)
	})
	s.answer(w, r, http.StatusOK, m, err)
}
