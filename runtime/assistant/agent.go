package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// AgentArea is the tool area of an agent's own tools (a node's): the assistant's own turns never
// offer them.
const AgentArea = "node"

// Agent is who answers a turn in the assistant's place: a node (spec 002 §5.2, §5.3). The turn is
// still the assistant's own loop, registry, playbooks, skills, write policy, Apply and Undo; Agent
// changes whose instructions it follows, which tools it offers, how strictly its writes are held,
// and whose name the ledger records them under.
type Agent struct {
	// Actor is who the ledger records the turn's writes as, here and at Apply.
	Actor ledger.Actor
	// Instructions replace the assistant's fixed instructions (the node's persona).
	Instructions string
	// Tools are the agent's own tools (area AgentArea), always shown; Without are assistant tools
	// the agent does without (the ones its own tools replace).
	Tools   []string
	Without []string
	// Preview holds every write for the owner's answer, whatever their policy: a turn someone else
	// started. A held write's card is the agent's to show (under needs-me too), so the assistant
	// never posts it on Needs me itself.
	Preview bool
	// ReadOnly offers no writes at all: a helper that only reads.
	ReadOnly bool
	// Turn is what the agent's own tools read of the turn that calls them (tools.ToolContext.Turn).
	Turn any
}

// policyFor is the write policy an agent's turn runs under: the person's, narrowed to preview when
// the agent asks, and preview in place of needs-me (the agent's card is mirrored on Needs me).
func (a *Agent) policyFor(policy string) string {
	if a == nil {
		return policy
	}
	if a.Preview || policy == NeedsMe {
		return Preview
	}
	return policy
}

// offers reports whether a turn for a (nil for the assistant's own) may call t.
func (a *Agent) offers(t *tools.Tool) bool {
	if t == nil {
		return false
	}
	if t.Area == AgentArea {
		return a != nil && slices.Contains(a.Tools, t.Name)
	}
	if a != nil && a.ReadOnly && (t.Write != nil || t.Outside != nil) {
		return false
	}
	return a == nil || !slices.Contains(a.Without, t.Name)
}

// offered is what a turn for a may run.
func (s *Service) offered(a *Agent) []string {
	return slices.DeleteFunc(s.cfg.Tools.Names(), func(n string) bool { return !a.offers(s.cfg.Tools.Get(n)) })
}

// actorJSON is the conversation's actor column for a: ” for the assistant.
func actorJSON(a *Agent) string {
	if a == nil {
		return ""
	}
	b, _ := json.Marshal(a.Actor)
	return string(b)
}

// actorOf is who the ledger records a conversation's writes as: the assistant, or the agent
// whose turns keep it.
func (s *Service) actorOf(ctx context.Context, convID string) (ledger.Actor, error) {
	var raw string
	err := s.cfg.Store.Reader().QueryRowContext(ctx, "SELECT actor FROM assistant_conversations WHERE id = ?", convID).Scan(&raw)
	if err != nil || raw == "" {
		return ledger.Actor{Kind: ledger.Assistant, ID: convID, Name: "Assistant"}, nil
	}
	var a ledger.Actor
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return ledger.Actor{}, fmt.Errorf("assistant: the actor of %s: %w", convID, err)
	}
	return a, nil
}
