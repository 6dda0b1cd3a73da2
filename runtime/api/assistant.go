package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/runtime/assistant"
)

// mountAssistant adds the assistant's routes:
//
//	POST   /api/assistant/turn                      one message; the turn streams as server-sent events
//	GET    /api/assistant/conversations             [limit]: recent chats, newest first
//	GET    /api/assistant/conversations/{id}        one chat with its messages
//	DELETE /api/assistant/conversations/{id}        stops its turn, then deletes it
//	POST   /api/assistant/conversations/{id}/stop   stops its turn; what was streamed is kept
//	GET    /api/assistant/settings                  provider, model, baseUrl, effort, writePolicy
//	PUT    /api/assistant/settings                  changes the fields sent
//	POST   /api/assistant/apply                     {conversationId, proposalIds?}: runs held writes
//	POST   /api/assistant/proposals/{id}/apply      runs one held write
//	POST   /api/assistant/proposals/{id}/discard    drops one held write
//	POST   /api/assistant/conversations/{id}/apply-all
//	POST   /api/assistant/undo, /redo               {group}: a receipt's Undo and Redo
func (s *Server) mountAssistant(api func(string, http.HandlerFunc)) {
	if s.opts.Assistant == nil {
		return
	}
	api("POST /api/assistant/turn", s.assistantTurn)
	api("GET /api/assistant/conversations", s.listConversations)
	api("GET /api/assistant/conversations/{id}", s.getConversation)
	api("DELETE /api/assistant/conversations/{id}", s.deleteConversation)
	api("POST /api/assistant/conversations/{id}/stop", s.stopConversation)
	api("GET /api/assistant/settings", s.assistantSettings)
	api("PUT /api/assistant/settings", s.setAssistantSettings)
	api("POST /api/assistant/apply", s.applyHeld)
	api("POST /api/assistant/proposals/{id}/apply", s.applyProposal)
	api("POST /api/assistant/proposals/{id}/discard", s.discardProposal)
	api("POST /api/assistant/conversations/{id}/apply-all", s.applyAll)
	api("POST /api/assistant/undo", s.undoGroup)
	api("POST /api/assistant/redo", s.redoGroup)
	s.mountSkills(api)
}

// assistantTurn answers one message, streaming the turn as server-sent events (turnStream; every
// event, its fields and order are in docs/assistant-turn.md). A request refused before the turn
// starts is answered with a JSON error instead.
func (s *Server) assistantTurn(w http.ResponseWriter, r *http.Request) {
	var req assistant.TurnRequest
	if err := decode(w, r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var (
		mu      sync.Mutex
		started bool
		rc      = http.NewResponseController(w)
	)
	write := func(event string, v any) {
		b, _ := json.Marshal(v)
		rc.SetWriteDeadline(time.Now().Add(sseWriteLimit))
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		rc.Flush()
	}
	start := func() {
		if started {
			return
		}
		started = true
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
	}
	// The keepalive writer is waited for: a write after the handler returns is a panic.
	done, exited := make(chan struct{}), make(chan struct{})
	defer func() { close(done); <-exited }()
	go func() { // a comment line while the model thinks, so nothing between gives up
		defer close(exited)
		t := time.NewTicker(s.opts.Keepalive)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				mu.Lock()
				if started {
					rc.SetWriteDeadline(time.Now().Add(sseWriteLimit))
					fmt.Fprint(w, ": keepalive\n\n")
					rc.Flush()
				}
				mu.Unlock()
			}
		}
	}()
	_, err := s.opts.Assistant.Turn(r.Context(), req, func(e assistant.Event) {
		mu.Lock()
		defer mu.Unlock()
		if data, ok := turnEventData(e); ok {
			start()
			write(e.Type, data)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if err == nil {
		return
	}
	if !started {
		s.writeErr(w, r, err)
		return
	}
	if r.Context().Err() != nil {
		return // the client went away
	}
	write(turnEventError, turnError{Error: err.Error(), Kind: turnErrorKind(err)})
}
