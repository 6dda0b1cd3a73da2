package api

import "net/http"

// applyRequest names held writes to apply: proposalIds, or every one the conversation holds.
type applyRequest struct {
	ConversationID string   `json:"conversationId"`
	ProposalIDs    []string `json:"proposalIds,omitempty"`
}

func (s *Server) applyHeld(w http.ResponseWriter, r *http.Request) {
	var req applyRequest
	if err := decode(w, r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if req.ConversationID == "" && len(req.ProposalIDs) == 0 {
		writeError(w, http.StatusBadRequest, "Name the conversation, or the proposals to apply.")
		return
	}
	s.apply(w, r, req.ConversationID, req.ProposalIDs)
}

// applyProposal answers {tool}: the one receipt.
// applyProposal answers {tool}: the one receipt.
func (s *Server) applyProposal(w http.ResponseWriter, r *http.Request) {
	rows, err := s.opts.Assistant.Apply(r.Context(), "", []string{r.PathValue("id")})
	var row any
	if len(rows) == 1 {
		row = rows[0]
	}
	s.answer(w, r, http.StatusOK, map[string]any{"tool": row}, err)
}

func (s *Server) applyAll(w http.ResponseWriter, r *http.Request) {
	s.apply(w, r, r.PathValue("id"), nil)
}

// apply answers {tools} with the applied writes' receipts; a failed Apply answers 422 with the
// sentence and the receipts (which call failed, which were not attempted).
func (s *Server) apply(w http.ResponseWriter, r *http.Request, convID string, ids []string) {
	rows, err := s.opts.Assistant.Apply(r.Context(), convID, ids)
	s.answer(w, r, http.StatusOK, map[string]any{"tools": rows}, err)
}

func (s *Server) discardProposal(w http.ResponseWriter, r *http.Request) {
	err := s.opts.Assistant.Discard(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusNoContent, nil, err)
}

type groupRequest struct {
	Group string `json:"group"`
}

// undoGroup and redoGroup are a receipt's Undo and Redo: that write, not the newest one.
func (s *Server) undoGroup(w http.ResponseWriter, r *http.Request) {
	var req groupRequest
	if err := decode(w, r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	g, err := s.opts.Assistant.Undo(r.Context(), req.Group)
	s.answer(w, r, http.StatusOK, map[string]any{"group": g}, err)
}

func (s *Server) redoGroup(w http.ResponseWriter, r *http.Request) {
	var req groupRequest
	if err := decode(w, r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	g, err := s.opts.Assistant.Redo(r.Context(), req.Group)
	s.answer(w, r, http.StatusOK, map[string]any{"group": g}, err)
}
