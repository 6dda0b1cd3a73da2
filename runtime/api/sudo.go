package api

import (
	"net/http"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

// The sudo card's own routes (spec 002 §8.13, as the administrator):
//
//	GET  /api/node/sudo/{messageId}   the command, the node's reason, the computer and its seal key
//	POST /api/node/sudo/{messageId}   {action: "run", sealed?} | {action: "deny"}, answered once
//
// The password is never sent in the clear: the page seals it for this computer's key with purpose
// "sudo", the card as the decision and the command's SHA-256 as the name, and the box is opened
// here, once, for that command only. Without a box, run means sudo without a password.

type sudoView struct {
	MessageID string             `json:"messageId"`
	Status    string             `json:"status"`
	Command   string             `json:"command"`
	Reason    string             `json:"reason"`
	Folder    string             `json:"folder"`
	Computer  string             `json:"computer"`
	Hash      string             `json:"hash"`
	Tries     int                `json:"tries"`
	ExpiresAt string             `json:"expiresAt,omitempty"`
	Purpose   string             `json:"purpose"`
	SealKey   secrets.SealPublic `json:"sealKey"`
}

func (s *Server) getSudo(w http.ResponseWriter, r *http.Request) {
	m, c, err := s.opts.Nodes.SudoCard(r.Context(), r.PathValue("messageId"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	v := sudoView{MessageID: m.ID, Status: c.Status, Command: c.Sudo.Command, Reason: c.Sudo.Reason, Folder: c.Sudo.Folder,
		Computer: c.Sudo.Computer, Hash: c.Sudo.Hash, Tries: c.Sudo.Tries, Purpose: "sudo", SealKey: s.opts.Secrets.SealKey()}
	if c.ExpiresAt != nil {
		v.ExpiresAt = c.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) answerSudo(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Action string       `json:"action"`
		Sealed *secrets.Box `json:"sealed"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	id := r.PathValue("messageId")
	by := s.cardAnswerer(r)
	switch {
	case in.Action == "deny":
		m, err := s.opts.Nodes.Answer(r.Context(), id, "discard", by)
		s.answer(w, r, http.StatusOK, m, err)
		return
	case in.Action != "run":
		writeError(w, http.StatusBadRequest, `action is "run" or "deny".`)
		return
	case in.Sealed == nil:
		m, err := s.opts.Nodes.Answer(r.Context(), id, "approve", by)
		s.answer(w, r, http.StatusOK, m, err)
		return
	}
	_, c, err := s.opts.Nodes.SudoCard(r.Context(), id)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		writeSealError(w, "seal_origin", "The request has no Origin; type the password in Ensemble's own page.")
		return
	}
	v, ok := s.openSealed(w, r, *in.Sealed, secrets.Expect{DecisionID: id, Name: c.Sudo.Hash, Origins: []string{origin}, Purpose: "sudo"})
	if !ok {
		return
	}
	m, err := s.opts.Nodes.AnswerSudo(r.Context(), id, []byte(v.Value), by)
	s.answer(w, r, http.StatusOK, m, err)
}
