package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// resumeNoteText is what a turn resumed after a restart is told of the tools its predecessor ran
// (runtime/node/engine.go, resumeNote).
const resumeNoteText = "cut off by a restart after it ran these tools"

// TestNodeKill9 kills `ensemble serve` with SIGKILL in the middle of a node's turn and starts it
// again on the same data folder (spec 002 §5.1): a turn cut off after a tool ran is resumed, told
// what it already did, and does not do it again; a turn cut off before it acted runs again from
// scratch. Either way the node answers once.
func TestNodeKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Run("after a tool", nodeKilledAfterTool)
	t.Run("before any tool", nodeKilledBeforeTool)
}

// nodeKilledAfterTool: the turn creates Alpha, then its next model request hangs; the kill comes
// then. The resumed turn is told Alpha is done, creates Beta and answers.
func nodeKilledAfterTool(t *testing.T) {
	k := newKilledNode(t)
	noNote := func(r *enginetest.Request) bool { return !strings.Contains(r.LastUserText(), resumeNoteText) }
	k.model.Script(
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Alpha"}}}).
			When(enginetest.Match{Func: noNote}).Named("alpha"),
		enginetest.Hang().When(enginetest.Match{Func: noNote}).Named("hang"),
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Beta"}}}).
			WhenLastUser(resumeNoteText).Named("beta"),
		enginetest.Say("Done: Alpha and Beta are in To do.").Named("done"),
	)
	k.post("Add a task Alpha, then a task Beta.")
	k.waitStep(1)
	// The tool's receipt is written as the tool ends, before the turn asks the model again.
	k.waitDB("Alpha's receipt on the running turn", `SELECT count(*) FROM node_turns WHERE status = 'running' AND acted_at IS NOT NULL
		AND receipts LIKE '%hub_create_tasks%'`)
	k.kill()
	k.restart()
	k.settle()

	if got := k.replies(); len(got) != 1 || got[0] != "Done: Alpha and Beta are in To do." {
		t.Errorf("the node's replies = %q, want one", got)
	}
	if got := k.tasks(); got["Alpha"] != 1 || got["Beta"] != 1 || len(got) != 2 {
		t.Errorf("tasks after the restart = %v, want one Alpha and one Beta", got)
	}
	resumed, ok := k.request(2)
	if !ok {
		t.Fatalf("no resumed request reached the model; requests: %s", k.summary())
	}
	text := resumed.LastUserText()
	if !strings.Contains(text, resumeNoteText) || !strings.Contains(text, "hub_create_tasks") || !strings.Contains(text, "Alpha") {
		t.Errorf("the resumed turn was not told what it ran: %q", text)
	}
	var cut, resumedTurn int
	k.db.QueryRow(`SELECT count(*) FROM node_turns WHERE status = 'failed' AND error = 'cut off by a restart after it acted'`).Scan(&cut)
	k.db.QueryRow(`SELECT count(*) FROM node_turns WHERE reason = 'resume' AND status = 'done'`).Scan(&resumedTurn)
	if cut != 1 || resumedTurn != 1 {
		t.Errorf("turns: %d cut off after acting, %d resumed and done; want one of each", cut, resumedTurn)
	}
}

// nodeKilledBeforeTool: the very first model request hangs; the kill comes then. The turn had not
// acted, so it runs again from scratch, with the same words and no note, and answers once.
func nodeKilledBeforeTool(t *testing.T) {
	k := newKilledNode(t)
	k.model.Script(
		enginetest.Hang().Named("hang"),
		enginetest.Say("Hello, Sam.").Named("hello"),
	)
	k.post("Say hello to me, I am Sam.")
	first := k.waitStep(0)
	k.kill()
	k.restart()
	k.settle()

	if got := k.replies(); len(got) != 1 || got[0] != "Hello, Sam." {
		t.Errorf("the node's replies = %q, want one", got)
	}
	rerun, ok := k.request(1)
	if !ok {
		t.Fatalf("the turn did not run again after the restart; requests: %s", k.summary())
	}
	text := rerun.LastUserText()
	if strings.Contains(text, "cut off by a restart") {
		t.Errorf("a turn that had not acted was resumed, not run again: %q", text)
	}
	if afterContext(text) != afterContext(first.LastUserText()) {
		t.Errorf("the rerun's message %q differs from the first try's %q", afterContext(text), afterContext(first.LastUserText()))
	}
	// The rerun carries the person's message once: the first try left nothing in the conversation.
	said := 0
	for _, m := range rerun.Messages {
		for _, b := range m.Blocks {
			if m.Role == "user" && strings.Contains(b.Text, "I am Sam.") {
				said++
			}
		}
	}
	if said != 1 {
		t.Errorf("the rerun's request holds the person's message %d times, want once: %+v", said, rerun.Messages)
	}
	var requeued int
	k.db.QueryRow(`SELECT count(*) FROM node_turns`).Scan(&requeued)
	if requeued != 1 {
		t.Errorf("%d turns for one message; the cut-off turn should run again as itself", requeued)
	}
}

// killedNode is a node in `ensemble serve` whose model is the scripted server, and the runtime
// that will be killed under it.
type killedNode struct {
	t     *testing.T
	data  string
	model *enginetest.Server
	s     *served
	c     *client
	room  string
	db    *sql.DB
}

func newKilledNode(t *testing.T) *killedNode {
	t.Helper()
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	t.Setenv("OPENAI_API_KEY", "")
	k := &killedNode{t: t, data: t.TempDir(), model: model}
	k.start()
	ctx := context.Background()
	err := k.c.do(ctx, "PUT", "/api/assistant/settings", map[string]any{"provider": "anthropic", "model": "claude-test", "writePolicy": "immediate"}, nil)
	if err != nil {
		t.Fatalf("set the assistant's model: %v", err)
	}
	var raw json.RawMessage
	if err := k.c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Scout"}, &raw); err != nil {
		if strings.Contains(err.Error(), "There is no such API route") {
			// The node routes land on their own branch; until they do this cannot run.
			enginetest.CannotRun(t, "this build does not serve POST /api/node/nodes yet")
		}
		t.Fatalf("create a node: %v", err)
	}
	var n struct {
		DMRoomID string `json:"dmRoomId"`
		Node     *struct {
			DMRoomID string `json:"dmRoomId"`
		} `json:"node"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		t.Fatalf("the new node: %v: %s", err, raw)
	}
	if k.room = n.DMRoomID; n.Node != nil {
		k.room = n.Node.DMRoomID
	}
	if k.room == "" {
		t.Fatalf("the new node has no DM: %s", raw)
	}
	db, err := sql.Open("sqlite", "file:"+dbPath(k.data)+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	k.db = db
	return k
}

func (k *killedNode) start() {
	k.s = startServe(k.t, k.data)
	k.c = &client{f: k.s.f, http: httpClient()}
}

func (k *killedNode) post(body string) {
	k.t.Helper()
	if err := k.c.do(context.Background(), "POST", "/api/node/rooms/"+k.room+"/messages", map[string]any{"body": body}, nil); err != nil {
		k.t.Fatalf("post in the DM: %v", err)
	}
}

// waitStep waits until the model has been asked the script's step i, and returns that request.
func (k *killedNode) waitStep(i int) enginetest.Request {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := k.model.WaitForRequest(ctx, func(r *enginetest.Request) bool { return r.Side == "" && r.Step == i })
	if err != nil {
		k.t.Fatalf("the model was not asked step %d: %v; requests: %s\n%s", i, err, k.summary(), k.s.out.String())
	}
	return r
}

// kill ends the runtime with SIGKILL, as a crash or a pulled plug would.
func (k *killedNode) kill() {
	k.t.Helper()
	if err := k.s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		k.t.Fatal(err)
	}
	<-k.s.done
}

func (k *killedNode) restart() { k.start() }

// settle waits until the node's turns are over: none queued or running, and at least one ended.
func (k *killedNode) settle() {
	k.t.Helper()
	k.waitDB("the node's turns to settle", `SELECT count(*) = 0 AND (SELECT count(*) FROM node_turns WHERE status NOT IN ('queued', 'running')) > 0
		FROM node_turns WHERE status IN ('queued', 'running')`)
}

// waitDB waits until query, over the runtime's database, gives a non-zero count.
func (k *killedNode) waitDB(what, query string) {
	k.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := k.db.QueryRow(query).Scan(&n); err == nil && n > 0 {
			return
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("timed out waiting for %s; turns: %s; requests: %s\n%s", what, k.turns(), k.summary(), k.s.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replies are the node's text messages in its DM, read over the API.
func (k *killedNode) replies() []string {
	k.t.Helper()
	var raw json.RawMessage
	if err := k.c.do(context.Background(), "GET", "/api/node/rooms/"+k.room+"/messages", nil, &raw); err != nil {
		k.t.Fatalf("list the DM: %v", err)
	}
	type message struct{ Author, Kind, Body string }
	var ms []message
	if err := json.Unmarshal(raw, &ms); err != nil {
		var wrapped struct{ Messages []message }
		if err := json.Unmarshal(raw, &wrapped); err != nil {
			k.t.Fatalf("the DM's messages: %v: %s", err, raw)
		}
		ms = wrapped.Messages
	}
	var out []string
	for _, m := range ms {
		if m.Author == "node" && m.Kind == "text" {
			out = append(out, m.Body)
		} else if m.Kind == "error" {
			k.t.Errorf("the node posted an error in its DM: %s", m.Body)
		}
	}
	return out
}

// tasks counts the tasks by title, read over the API.
func (k *killedNode) tasks() map[string]int {
	k.t.Helper()
	var list struct {
		Tasks []struct{ Title string } `json:"tasks"`
	}
	if err := k.c.do(context.Background(), "GET", "/api/tasks", nil, &list); err != nil {
		k.t.Fatalf("list tasks: %v", err)
	}
	out := map[string]int{}
	for _, task := range list.Tasks {
		out[task.Title]++
	}
	return out
}

// request is the main request that step i of the script answered.
func (k *killedNode) request(i int) (enginetest.Request, bool) {
	for _, r := range k.model.Requests() {
		if r.Side == "" && r.Step == i {
			return r, true
		}
	}
	return enginetest.Request{}, false
}

func (k *killedNode) summary() string {
	var b strings.Builder
	for _, r := range k.model.Requests() {
		fmt.Fprintf(&b, "\n  #%d side=%q step=%d last user %.200q", r.Seq, r.Side, r.Step, r.LastUserText())
	}
	return b.String()
}

func (k *killedNode) turns() string {
	rows, err := k.db.Query(`SELECT id, reason, status, error, acted_at IS NOT NULL, receipts FROM node_turns ORDER BY created_at, rowid`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, reason, status, why, receipts string
		var acted bool
		rows.Scan(&id, &reason, &status, &why, &acted, &receipts)
		fmt.Fprintf(&b, "\n  %s %s %s acted=%v %q %s", id, reason, status, acted, why, receipts)
	}
	return b.String()
}

// afterContext is a turn's message without the context block the assistant puts first (it holds
// the time of day, which moves on between tries).
func afterContext(text string) string {
	if _, rest, ok := strings.Cut(text, "</context>"); ok {
		return strings.TrimSpace(rest)
	}
	return text
}
