package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/models"
)

func (s *Server) mountAssistant(api func(string, http.HandlerFunc)) {
	if s.opts.Assistant == nil {
		return
	}
	api("POST /api/assistant/turn", s.assistantTurn)
}

// assistantTurn answers one message, streaming the turn as server-sent events: "conversation"
// {conversationId}, "text" {text} (deltas), "tool" {tool} (a row when it starts and when it ends),
// then "done" {reply} or "error" {error, kind}. A request refused before the turn starts is
// answered with a JSON error instead.
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
	done := make(chan struct{})
	defer close(done)
	go func() { // a comment line while the model thinks, so nothing between gives up
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
		start()
		switch e.Type {
		case "conversation":
			write(e.Type, map[string]string{"conversationId": e.ConversationID})
		case "text":
			write(e.Type, map[string]string{"text": e.Text})
		case "tool":
			write(e.Type, map[string]any{"tool": e.Tool})
		case "done":
			write(e.Type, map[string]any{"reply": e.Reply})
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if err == nil {
		return
	}
	var ie *assistant.InputError
	if !started {
		if errors.As(err, &ie) {
			writeError(w, http.StatusBadRequest, ie.Msg)
			return
		}
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	kind := "failed"
	switch {
	case models.IsTimeout(err):
		kind = "timeout"
	case r.Context().Err() != nil:
		return // the client went away
	}
	write("error", map[string]string{"error": err.Error(), "kind": kind})
}
