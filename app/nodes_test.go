package app

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestNodesCommands makes, lists, shows, pauses, resumes and deletes a node through the command
// line, against a runtime started in-process.
func TestNodesCommands(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir

	if code, out := ensemble(t, data, "nodes", "list"); code != 0 || out != "You have no nodes yet; make one with `ensemble nodes create --name NAME`.\n" {
		t.Fatalf("empty list: %d %q", code, out)
	}
	code, out := ensemble(t, data, "nodes", "create", "--name", "Ada", "--handle", "ada", "--role", "researcher")
	if code != 0 || out != "Made Ada (@ada, researcher). Talk to it with `ensemble dm ada \"…\"`.\n" {
		t.Fatalf("create: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "create", "--name", "Ada Two", "--handle", "ada"); code != 1 ||
		out != "ensemble: Another of your nodes is already @ada. Pick another handle.\n" {
		t.Errorf("handle taken: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "create"); code != 1 || out != "ensemble: Give the node a --name, or a --template to make it from.\n" {
		t.Errorf("nothing to make it from: %d %q", code, out)
	}
	code, out = ensemble(t, data, "nodes", "list")
	if code != 0 || !regexp.MustCompile(`(?m)^HANDLE +NAME +ROLE +STATUS\n@ada +Ada +researcher +active$`).MatchString(out) {
		t.Fatalf("list: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "pause", "@ada"); code != 0 || out != "Paused Ada (@ada).\n" {
		t.Errorf("pause: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "list"); !strings.Contains(out, "paused") {
		t.Errorf("list after pause: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "resume", "ada"); code != 0 || out != "Resumed Ada (@ada).\n" {
		t.Errorf("resume: %d %q", code, out)
	}
	code, out = ensemble(t, data, "nodes", "show", "ada")
	for _, want := range []string{"Ada (@ada)  nod_", "  Role: researcher\n  Status: active\n", "Rooms:\n  room_", " Ada (DM)\n", "Memory: nothing yet.\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("show lacks %q: %d\n%s", want, code, out)
		}
	}
	if code, out = ensemble(t, data, "nodes", "show", "nobody"); code != 1 || out != "ensemble: There is no node \"nobody\".\n" {
		t.Errorf("show unknown: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "card", "msg_nope", "maybe"); code != 1 || out != "ensemble: Answer a card with approve or discard (once, mission or always for a computer card), not \"maybe\".\n" {
		t.Errorf("card bad decision: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "card", "msg_nope", "approve"); code != 1 || out != "ensemble: There is no message \"msg_nope\".\n" {
		t.Errorf("card unknown: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "delete", "ada"); code != 0 || out != "Deleted Ada (@ada) with its DM and memory.\n" {
		t.Errorf("delete: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "list"); code != 0 || !strings.Contains(out, "no nodes yet") {
		t.Errorf("list after delete: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "nodes", "fly"); code != 1 || !strings.Contains(out, "There is no command `ensemble nodes fly`") {
		t.Errorf("unknown command: %d %q", code, out)
	}
}

// TestDMWithoutAModel writes to a node whose model (and the assistant's) is not set up: the node's
// turn runs and fails, its DM gets the error line, dm prints it and exits 1 once the node is idle.
func TestDMWithoutAModel(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	if code, out := ensemble(t, data, "nodes", "create", "--name", "Ada", "--handle", "ada"); code != 0 {
		t.Fatalf("create: %d %q", code, out)
	}
	code, out := ensemble(t, data, "dm", "ada", "what is due this week?", "--timeout", "30s")
	// What really comes: the assistant's own sentence, as the node's error line in the DM.
	if code != 1 || out != "Ada could not answer: Choose a model: name one with the message, or set one in the assistant's settings.\n" {
		t.Fatalf("dm: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "dm", "ada"); code != 1 || !strings.Contains(out, "Run it as `ensemble dm HANDLE \"MESSAGE\"`") {
		t.Errorf("dm without a message: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "dm", "nobody", "hi"); code != 1 || out != "ensemble: There is no node \"nobody\".\n" {
		t.Errorf("dm to nobody: %d %q", code, out)
	}
}

// TestDMStreamsTheReply writes to a node on the scripted model: dm prints the reply as it streams,
// once, and ends when the node is idle.
func TestDMStreamsTheReply(t *testing.T) {
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	if code, out := ensemble(t, data, "nodes", "create", "--name", "Ada", "--handle", "ada", "--provider", "anthropic", "--model", "Test Model"); code != 0 {
		t.Fatalf("create: %d %q", code, out)
	}
	model.Script(enginetest.Say("Nothing is due this week."))
	code, out := ensemble(t, data, "dm", "@ada", "what is due", "this week?", "--timeout", "30s")
	if code != 0 || out != "Ada: Nothing is due this week.\n" {
		t.Fatalf("dm: %d %q", code, out)
	}
	if reqs := model.Requests(); len(reqs) != 1 || reqs[0].Model != "Test Model" || !strings.Contains(reqs[0].LastUserText(), "what is due this week?") {
		t.Fatalf("the model was asked %+v", reqs)
	}
	if code, out := ensemble(t, "dm", "--help"); code != 0 || !strings.Contains(out, "[a]pprove / [d]iscard / [s]kip") {
		t.Errorf("dm --help: %d %q", code, out)
	}
	if code, out := ensemble(t, "nodes", "--help"); code != 0 || !strings.Contains(out, "show     one node (by @handle or id)") {
		t.Errorf("nodes --help: %d %q", code, out)
	}
}

// TestDMPrintsACard: a node that proposes a new node puts a card in its DM and waits; dm, not at
// a terminal, prints the card with its id and how to answer it; answered with `nodes card`, the
// node goes on and dm ends after its reply.
func TestDMPrintsACard(t *testing.T) {
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	if code, out := ensemble(t, data, "nodes", "create", "--name", "Ada", "--handle", "ada", "--provider", "anthropic", "--model", "Test Model"); code != 0 {
		t.Fatalf("create: %d %q", code, out)
	}
	model.Script(
		enginetest.ToolCall("node_create", map[string]any{"name": "Bob", "role": "writer", "charter": "Write.", "slug": "bob"}),
		enginetest.Say("Bob is here."),
	)
	answered := make(chan string, 1)
	go func() {
		defer close(answered)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			cards, err := rt.nodes.PendingCards(context.Background())
			if err == nil && len(cards) == 1 {
				_, out := ensemble(t, data, "nodes", "card", cards[0].ID, "approve")
				answered <- out
				return
			}
		}
	}()
	code, out := ensemble(t, data, "dm", "ada", "make a writer called Bob", "--timeout", "30s")
	card := regexp.MustCompile(`^Card (msg_[0-9a-f]+) from Ada: Ada proposes a new node: Bob, writer\.\n` +
		"Answer it in the window, or with `ensemble nodes card (msg_[0-9a-f]+) approve` \\(or discard\\)\\.\n" +
		`Ada: Bob is here\.\n$`).FindStringSubmatch(out)
	if code != 0 || card == nil || card[1] != card[2] {
		t.Fatalf("dm: %d %q", code, out)
	}
	if got := <-answered; got != "Approved. Made the node Bob (@bob), with its own DM.\n" {
		t.Errorf("nodes card: %q", got)
	}
	if code, out = ensemble(t, data, "nodes", "card", card[1], "discard"); code != 1 || out != "ensemble: This card was already approved.\n" {
		t.Errorf("second answer: %d %q", code, out)
	}
}

// TestDMAsksAboutACard: at a terminal, dm asks [a]pprove / [d]iscard / [s]kip for a card, takes
// only a, d or s, answers the card, and follows the node to its reply.
func TestDMAsksAboutACard(t *testing.T) {
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	if code, out := ensemble(t, data, "nodes", "create", "--name", "Ada", "--handle", "ada", "--provider", "anthropic", "--model", "Test Model"); code != 0 {
		t.Fatalf("create: %d %q", code, out)
	}
	model.Script(
		enginetest.ToolCall("node_create", map[string]any{"name": "Bob", "role": "writer", "charter": "Write.", "slug": "bob"}),
		enginetest.Say("Not made, then."),
	)
	c, err := connect(context.Background(), &globals{data: rt.cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = dm(context.Background(), c, "ada", "make a writer called Bob", 30*time.Second, strings.NewReader("maybe\nd\n"), &out)
	want := regexp.MustCompile(`^Card msg_[0-9a-f]+ from Ada: Ada proposes a new node: Bob, writer\.\n` +
		`\[a\]pprove / \[d\]iscard / \[s\]kip: Type a, d or s\.\n\[a\]pprove / \[d\]iscard / \[s\]kip: Discarded\.\n` +
		`Ada: Not made, then\.\n$`)
	if err != nil || !want.MatchString(out.String()) {
		t.Fatalf("dm: %v %q", err, out.String())
	}
	if n, _ := rt.nodes.Nodes(context.Background()); len(n) != 1 {
		t.Errorf("a discarded card made a node: %v", n)
	}
}
