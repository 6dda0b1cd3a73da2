package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/node"
)

// TestNodeDrivesClaudeSession is spec 002 §8 end to end, with the real Claude Code from npm
// against the scripted model in a loopback-only namespace, both as the node's own mind (its
// plan) and as the coding agent it drives: the node starts a session on a folder with
// node_session_start, the person steers it from its card through the API, the steered run is
// stopped and wakes nobody, the steer's run resumes the same agent session, and when it ends
// the node reports the result in its DM.
func TestNodeDrivesClaudeSession(t *testing.T) {
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
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: log,
		Drivers: map[string]engines.Driver{a.agent: a.driver(bin, log)}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := context.Background()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	folder := t.TempDir()

	n, err := rt.nodes.Create(ctx, node.NewNode{Name: "Dev"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err = rt.nodes.Update(ctx, n.ID, node.NodeChange{Provider: &a.provider, Model: &a.model}); err != nil {
		t.Fatal(err)
	}
	mind := func(last string) enginetest.Match {
		return enginetest.Match{SystemContains: "You are Dev", LastUserContains: last}
	}
	toolResult := true
	model.Script(
		// The node's turn: it starts the session, then says so.
		enginetest.Say("Starting it.").Call(a.mcp+node.ToolSessionStart, map[string]any{
			"title": "Greeting file", "prompt": "Write a greeting for the team. FIRST-PROMPT", "agent": "claude",
			"folder": folder, "newSession": true}).When(mind("write a greeting")),
		enginetest.Say("I started Claude Code on it.").When(enginetest.Match{SystemContains: "You are Dev", ToolResult: &toolResult}),
		// The coding run: the first message is still going when the person steers.
		enginetest.Hang().When(enginetest.Match{LastUserContains: "FIRST-PROMPT"}),
		enginetest.Say("The greeting now says goodbye.").When(enginetest.Match{LastUserContains: "STEER-PROMPT"}),
		// The run's end wakes the node, which reports it.
		enginetest.Say("Done: Claude Code wrote the greeting, and it now says goodbye.").When(mind("has ended")),
	)
	if _, err := rt.nodes.PostMessage(ctx, n.DMRoomID, node.Post{Body: "Please write a greeting for the team in " + folder}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if _, err := model.WaitForRequest(wctx, func(r *enginetest.Request) bool {
		return strings.Contains(r.LastUserText(), "FIRST-PROMPT")
	}); err != nil {
		t.Fatalf("the coding run never reached the model: %v", err)
	}
	var first string
	if err := rt.store.Reader().QueryRow("SELECT job_id FROM node_runs WHERE job_id IS NOT NULL").Scan(&first); err != nil {
		t.Fatalf("node_session_start recorded no run: %v", err)
	}
	waitJob(t, rt, first, func(j jobs.Job) bool { return j.Status == jobs.Running && j.SessionID != "" })
	settleNodes(t, rt)

	// The person steers from the card.
	var res node.ControlResult
	if err := c.do(ctx, "POST", "/api/node/sessions/"+first+"/control", map[string]any{"action": "steer", "prompt": "Make it say goodbye. STEER-PROMPT"}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.ID == "" {
		t.Fatalf("the steer answered %+v", res)
	}
	stopped := waitJob(t, rt, first, func(j jobs.Job) bool { return j.Status.Ended() })
	if stopped.Status != jobs.Stopped {
		t.Fatalf("the steered run ended %s, want stopped", stopped.Status)
	}
	var steer string
	deadline := time.Now().Add(time.Minute)
	for steer == "" && time.Now().Before(deadline) {
		rt.store.Reader().QueryRow("SELECT coalesce(job_id, '') FROM node_runs WHERE id = ?", res.ID).Scan(&steer)
		time.Sleep(50 * time.Millisecond)
	}
	if steer == "" {
		t.Fatal("the steer never started")
	}
	done := waitJob(t, rt, steer, func(j jobs.Job) bool { return j.Status.Ended() })
	if done.Status != jobs.Done || done.Summary != "The greeting now says goodbye." {
		t.Fatalf("the steer's run ended %s with %q", done.Status, done.Summary)
	}
	if done.Continues != first || done.SessionID != stopped.SessionID {
		t.Errorf("the steer continues %q in agent session %q; want run %s's session %q", done.Continues, done.SessionID, first, stopped.SessionID)
	}
	deadline = time.Now().Add(2 * time.Minute)
	var report string
	for report == "" && time.Now().Before(deadline) {
		for _, m := range nodeReplies(t, rt, n.DMRoomID) {
			if strings.HasPrefix(m.Body, "Done:") {
				report = m.Body
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if report != "Done: Claude Code wrote the greeting, and it now says goodbye." {
		t.Fatalf("the node's replies in its DM: %+v", nodeReplies(t, rt, n.DMRoomID))
	}
	settleNodes(t, rt)
	var ends, quiet int
	rt.store.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE reason = 'run'").Scan(&ends)
	rt.store.Reader().QueryRow("SELECT quiet FROM node_runs WHERE job_id = ?", first).Scan(&quiet)
	if ends != 1 || quiet != 1 {
		t.Errorf("%d run turns and the steered run quiet=%d; want one (the steer's) and quiet", ends, quiet)
	}
	var sess struct {
		Session node.SessionDetail `json:"session"`
	}
	if err := c.do(ctx, "GET", "/api/node/sessions/"+first, nil, &sess); err != nil {
		t.Fatal(err)
	}
	if sess.Session.NodeID != n.ID || sess.Session.Status != "idle" || len(sess.Session.Runs) != 2 || sess.Session.Agent != "claude" {
		b, _ := json.Marshal(sess)
		t.Errorf("GET the session: %s", b)
	}
}

func waitJob(t *testing.T, rt *Runtime, id string, ok func(jobs.Job) bool) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		j, err := rt.jobs.Get(context.Background(), id)
		if err == nil && ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s, %+v", id, j.Status, j)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
