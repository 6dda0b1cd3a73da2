package app

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/node"
)

// TestNodeOnClaudePlan runs a node on the person's Claude Code plan (spec 002 §5.2, spec 003 §8):
// the real Claude Code from npm, against the scripted model in a loopback-only namespace, answers
// a message in the node's DM with the node's persona, calling Ensemble's tools over the turn's MCP
// server; the write is the node's in the ledger, the reply is posted as the node, and the next
// message resumes the same Claude Code session.
func TestNodeOnClaudePlan(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Claude Code; not in -short")
	}
	a := planAgents()[0] // Claude Code, pinned
	bin := enginetest.InstallNPM(t, a.pkg, a.version, a.bin)
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	model := enginetest.NewServer(t)
	a.setup(t, model.URL)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: log,
		Drivers: map[string]engines.Driver{a.agent: a.driver(bin, log)}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := context.Background()

	n, err := rt.nodes.Create(ctx, node.NewNode{Name: "Scout"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err = rt.nodes.Update(ctx, n.ID, node.NodeChange{Provider: &a.provider, Model: &a.model}); err != nil {
		t.Fatal(err)
	}

	model.Script(
		enginetest.Say("Adding it.").Call(a.mcp+"hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Water the plants"}}}),
		enginetest.Say("I added Water the plants to To do."),
	)
	if _, err := rt.nodes.PostMessage(ctx, n.DMRoomID, node.Post{Body: "add a task: water the plants"}); err != nil {
		t.Fatal(err)
	}
	settleNodes(t, rt)
	replies := nodeReplies(t, rt, n.DMRoomID)
	if len(replies) != 1 || replies[0].Body != "I added Water the plants to To do." || replies[0].NodeID != n.ID {
		t.Fatalf("the node's replies in its DM = %+v", replies)
	}
	var titles, actor string
	err = rt.store.Reader().QueryRow(`SELECT (SELECT group_concat(title) FROM tasks),
		(SELECT g.actor_kind || ':' || g.actor_id FROM ledger_groups g JOIN ledger_changes c ON c.group_id = g.id
			JOIN tasks t ON c.tbl = 'tasks' AND c.row_id = t.id ORDER BY g.seq LIMIT 1)`).Scan(&titles, &actor)
	if err != nil || titles != "Water the plants" || actor != "node:"+n.ID {
		t.Fatalf("after the turn: tasks %q, written by %q, want node:%s (%v)", titles, actor, n.ID, err)
	}
	var first enginetest.Request
	for _, r := range model.Requests() {
		if r.Side == "" && r.Step == 0 {
			first = r // Claude Code's own request, not a side one (titles, probes)
			break
		}
	}
	if !strings.Contains(first.System, "You are Scout (@scout)") {
		t.Errorf("Claude Code's instructions are not the node's persona: %.300q", first.System)
	}
	for _, tool := range first.Tools {
		if !strings.HasPrefix(tool.Name, a.mcp) {
			t.Errorf("Claude Code was offered its own tool %q in a node's turn", tool.Name)
		}
	}
	if !strings.Contains(first.LastUserText(), "add a task: water the plants") {
		t.Errorf("the message reached Claude Code as %q", first.LastUserText())
	}
	session := planSessionOf(t, rt, n.ID, n.DMRoomID)
	if session == "" {
		t.Fatal("the DM's conversation keeps no Claude Code session after the first turn")
	}

	// The next message resumes the session: the model sees the first exchange as the session's
	// own messages, not as a transcript in the new message.
	model.Script(enginetest.Say("Just Water the plants."))
	if _, err := rt.nodes.PostMessage(ctx, n.DMRoomID, node.Post{Body: "what is on my list?"}); err != nil {
		t.Fatal(err)
	}
	settleNodes(t, rt)
	replies = nodeReplies(t, rt, n.DMRoomID)
	if len(replies) != 2 || replies[1].Body != "Just Water the plants." {
		t.Fatalf("the node's replies after the second message = %+v", replies)
	}
	reqs := model.Requests()
	var last enginetest.Request
	for _, r := range reqs {
		if r.Side == "" && r.Step == 2 {
			last = r
		}
	}
	if strings.Contains(last.LastUserText(), "Earlier in this conversation:") || len(last.Messages) < 4 ||
		!strings.Contains(last.LastUserText(), "what is on my list?") {
		t.Errorf("the second turn did not resume the session: %d messages, last %q", len(last.Messages), last.LastUserText())
	}
	var resumed bool
	for _, m := range last.Messages {
		for _, b := range m.Blocks {
			resumed = resumed || (m.Role == "user" && strings.Contains(b.Text, "add a task: water the plants"))
		}
	}
	if !resumed {
		t.Errorf("the resumed session does not hold the first message")
	}
	if again := planSessionOf(t, rt, n.ID, n.DMRoomID); again != session {
		t.Errorf("the second turn kept session %q, want the first turn's %q", again, session)
	}
}

// settleNodes waits until no node turn is queued or running.
func settleNodes(t *testing.T, rt *Runtime) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		if err := rt.store.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE status IN ('queued', 'running')").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the node's turns did not settle within 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nodeReplies are the text messages nodes posted in a room, in order.
func nodeReplies(t *testing.T, rt *Runtime, room string) []node.Message {
	t.Helper()
	ms, err := rt.nodes.Messages(context.Background(), room, node.Page{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	var out []node.Message
	for _, m := range ms {
		if m.Author == node.AuthorNode && m.Kind == node.KindText {
			out = append(out, m)
		} else if m.Kind == node.KindError {
			t.Errorf("the node posted an error in the room: %s", m.Body)
		}
	}
	return out
}

// planSessionOf is the agent session kept for a node's shared thread in a room.
func planSessionOf(t *testing.T, rt *Runtime, nodeID, room string) string {
	t.Helper()
	var session string
	err := rt.store.Reader().QueryRow(`SELECT c.plan_session FROM assistant_conversations c
		JOIN node_room_members m ON m.conversation_id = c.id WHERE m.room_id = ? AND m.node_id = ?`, room, nodeID).Scan(&session)
	if err != nil {
		t.Fatalf("read the DM's plan session: %v", err)
	}
	return session
}
