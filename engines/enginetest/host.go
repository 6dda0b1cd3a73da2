package enginetest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// Host is a stand-in engines.Host for driver tests: it records what a run asked and answers from
// tables.
type Host struct {
	// Permits answers a call by tool name; a missing tool is allowed.
	Permits map[string]engines.Permission
	// Answers answers questions by their text; a missing one picks option 0.
	Answers map[string]engines.Answer
	// BlockPermit makes Permit wait for its ctx.
	BlockPermit bool
	// Unsandboxed answers a call that asks to leave the sandbox, when set.
	Unsandboxed *engines.Permission

	mu        sync.Mutex
	calls     []engines.ToolCall
	questions []engines.Question
	events    []engines.Event
	changed   chan struct{}
}

// NewHost returns a Host that allows every call and picks option 0.
func NewHost() *Host {
	return &Host{Permits: map[string]engines.Permission{}, Answers: map[string]engines.Answer{}, changed: make(chan struct{})}
}

func (h *Host) note() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// Permit answers from the Permits table (BlockPermit: waits for ctx).
func (h *Host) Permit(ctx context.Context, call engines.ToolCall) (engines.Permission, error) {
	h.mu.Lock()
	h.calls = append(h.calls, call)
	h.note()
	p, ok := h.Permits[call.Tool]
	if call.Unsandboxed && h.Unsandboxed != nil {
		p, ok = *h.Unsandboxed, true
	}
	block := h.BlockPermit
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

func (h *Host) Ask(ctx context.Context, q engines.Question) (engines.Answer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.questions = append(h.questions, q)
	h.note()
	if a, ok := h.Answers[q.Text]; ok {
		return a, nil
	}
	return engines.Answer{Option: 0, Text: q.Options[0]}, nil
}

func (h *Host) Event(ev engines.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
	h.note()
}

func (h *Host) Calls() []engines.ToolCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]engines.ToolCall(nil), h.calls...)
}

func (h *Host) Questions() []engines.Question {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]engines.Question(nil), h.questions...)
}

func (h *Host) Events() []engines.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]engines.Event(nil), h.events...)
}

// waitFor waits until cond holds over the host's state.
// WaitFor waits until cond holds, failing t after a while.
func (h *Host) WaitFor(t testing.TB, what string, cond func() bool) {
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

// EventsOf is the events of one kind.
func (h *Host) EventsOf(kind engines.EventKind) []engines.Event {
	var out []engines.Event
	for _, ev := range h.Events() {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// testLogger logs through t.
// TestLogger logs to t.
func TestLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
