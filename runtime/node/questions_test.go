package node

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/needs"
)

func TestQuestionRefusal(t *testing.T) {
	for _, c := range []struct{ question, want string }{
		{"Which port should the dev server use?", ""},
		{"Should the button be blue or green?", ""},
		{"May I have permission to write to /etc/hosts?", "permission"},
		{"Can you give me the API key for the staging server?", "permission"},
		{"Should I also refactor the other files in the repo?", "scope"},
		{"Shall I disable the TLS verification to get past this?", "security"},
		{"This needs the paid tier, which costs $20 a month. Go ahead?", "cost"},
		{"Can I delete the old migrations folder?", "destructive"},
		{"Should I run git reset --hard to start over?", "destructive"},
	} {
		if got := questionRefusal(c.question); got != c.want {
			t.Errorf("questionRefusal(%q) = %q, want %q", c.question, got, c.want)
		}
	}
}

func TestQuoted(t *testing.T) {
	src := "Build the page.\nUse   port 8080 for the dev server, please."
	for _, c := range []struct {
		quote string
		want  bool
	}{
		{"use port 8080 for the dev server", true},
		{"“Use port 8080”", true},
		{"use port 3000", false},
		{"Us", false},
		{"port 8080 for the\ndev server", true},
	} {
		if got := quoted(src, c.quote); got != c.want {
			t.Errorf("quoted(%q) = %v, want %v", c.quote, got, c.want)
		}
	}
}

func TestAnswerOf(t *testing.T) {
	d := needs.Decision{Options: []string{"Port 3000", "Port 8080"}}
	if a, err := answerOf(d, " port 8080 "); err != nil || a.Option != 1 {
		t.Fatalf("an option: %+v, %v", a, err)
	}
	if _, err := answerOf(d, "9000"); err == nil {
		t.Fatal("a question with options only took free text")
	}
	d.FreeText = true
	if a, err := answerOf(d, "9000"); err != nil || a.Option != needs.FreeText || a.Text != "9000" {
		t.Fatalf("free text: %+v, %v", a, err)
	}
}

// An agent's question in a run a node started for its owner goes to that node, once; the node
// answers only from its owner's own words, and the answer reaches the agent as the owner's would.
// A question the owner keeps, or one of a refused kind, never reaches the node.
func TestAgentQuestionGoesToItsNode(t *testing.T) {
	sf := newSessFix(t)
	sf.model.Script(enginetest.Say(noReply).Forever())
	n := sf.node("Dev")
	ctx := context.Background()
	sf.post(n.DMRoomID, "Build the landing page. Use port 8080 for the dev server.")
	sf.settle()
	j := sf.start(n, "Build the landing page")
	sf.waitJob(j.ID, running, "the run")

	ask := func(text string, options ...string) (chan needs.Answer, string) {
		t.Helper()
		got := make(chan needs.Answer, 1)
		go func() {
			a, _ := sf.needs.Ask(ctx, needs.NewQuestion(needs.Source{RunID: j.ID, Title: "Build the landing page"}, text, options, -1, len(options) == 0))
			got <- a
		}()
		var id string
		sf.waitFor("the question on Needs me", func() bool {
			open, _ := needs.OpenDecisions(ctx, sf.st.Reader(), 10)
			for _, d := range open {
				if d.Question == text {
					id = d.ID
					return true
				}
			}
			return false
		})
		return got, id
	}
	got, id := ask("Which port should the dev server use?", "Port 3000", "Port 8080")
	sf.waitFor("the node's question turn", func() bool {
		return sf.count("SELECT count(*) FROM node_turns WHERE operation_id = ? AND status = 'done'", "question:"+id) == 1
	})
	if texts := sf.nodeTexts(n.DMRoomID); len(texts) != 0 {
		t.Fatalf("a question turn posted %q in the DM", texts)
	}
	c := &turnCtx{s: sf.svc, rt: &runningTurn{turn: Turn{ByOwner: true, Reason: ReasonQuestion}}, node: n}
	for _, bad := range []answerQuestionIn{
		{Decision: id, Answer: "Port 3000", Quote: "use port 3000", Source: SourceOwner},
		{Decision: id, Answer: "Port 8080", Quote: "Use port 8080", Source: SourceMission},
		{Decision: id, Answer: "Port 9000", Quote: "Use port 8080", Source: SourceOwner},
	} {
		if _, err := sf.svc.answerQuestion(ctx, c, bad); err == nil {
			t.Fatalf("answered with %+v", bad)
		}
	}
	other := sf.node("Other")
	if _, err := sf.svc.answerQuestion(ctx, &turnCtx{s: sf.svc, rt: c.rt, node: other},
		answerQuestionIn{Decision: id, Answer: "Port 8080", Quote: "Use port 8080", Source: SourceOwner}); err == nil {
		t.Fatal("another node answered the question")
	}
	if _, err := sf.svc.answerQuestion(ctx, c, answerQuestionIn{Decision: id, Answer: "port 8080", Quote: "use port 8080 for the dev server", Source: SourceOwner}); err != nil {
		t.Fatal(err)
	}
	if a := <-got; a.Option != 1 || a.Text != "Port 8080" {
		t.Fatalf("the agent got %+v, want 8080", a)
	}
	if sf.count("SELECT count(*) FROM decisions WHERE id = ? AND answered_by LIKE '@dev, from its owner%'", id) != 1 {
		t.Fatal("the answer does not say the node answered it from its owner's message")
	}

	_, refused := ask("Can I delete the old build folder?")
	if _, err := sf.svc.Update(ctx, n.ID, NodeChange{Autonomy: &Autonomy{AnswerAgentQuestions: "ask"}}); err != nil {
		t.Fatal(err)
	}
	_, kept := ask("Which font should the headings use?")
	sf.settle()
	for _, q := range []string{refused, kept} {
		if sf.count("SELECT count(*) FROM node_turns WHERE operation_id = ?", "question:"+q) != 0 {
			t.Fatalf("the question %s reached the node", q)
		}
	}
	if !strings.HasPrefix(refused, "dec_") {
		t.Fatalf("question id %q", refused)
	}
}
