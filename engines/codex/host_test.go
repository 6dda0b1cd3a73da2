package codex

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// fakeHost records what a run asked and answers from tables.
type fakeHost struct {
	// permit answers a call by tool name; a missing tool is allowed.
	permit map[string]engines.Permission
	// answers answers questions by their text; a missing one picks option 0.
	answers map[string]engines.Answer
	// blockPermit makes Permit wait for its ctx.
	blockPermit bool

	mu        sync.Mutex
	calls     []engines.ToolCall
	questions []engines.Question
	events    []engines.Event
	changed   chan struct{}
}

func newFakeHost() *fakeHost {
	return &fakeHost{permit: map[string]engines.Permission{}, answers: map[string]engines.Answer{}, changed: make(chan struct{})}
}

func (h *fakeHost) note() {
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *fakeHost) Permit(ctx context.Context, call engines.ToolCall) (engines.Permission, error) {
	h.mu.Lock()
	h.calls = append(h.calls, call)
	h.note()
	p, ok := h.permit[call.Tool]
	block := h.blockPermit
	h.mu.Unlock()
	if block {
		<-ctx.Done()
		return engines.Permission{}, ctx.Err()
	}
	if !ok {
		p = engines.Permission{Allow: true}
	}
	return p, nil
}

func (h *fakeHost) Ask(ctx context.Context, q engines.Question) (engines.Answer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.questions = append(h.questions, q)
	h.note()
	if a, ok := h.answers[q.Text]; ok {
		return a, nil
	}
	return engines.Answer{Option: 0, Text: q.Options[0]}, nil
}

func (h *fakeHost) Event(ev engines.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
	h.note()
}

func (h *fakeHost) Calls() []engines.ToolCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]engines.ToolCall(nil), h.calls...)
}

func (h *fakeHost) Questions() []engines.Question {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]engines.Question(nil), h.questions...)
}

func (h *fakeHost) Events() []engines.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]engines.Event(nil), h.events...)
}

// waitFor waits until cond holds over the host's state.
func (h *fakeHost) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		h.mu.Lock()
		ch := h.changed
		h.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (h *fakeHost) eventsOf(kind engines.EventKind) []engines.Event {
	var out []engines.Event
	for _, ev := range h.Events() {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// testLogger logs through t.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
