package assistant

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// withNeeds gives f's assistant a Needs me and the needs-me policy.
func (f *fixture) withNeeds(t *testing.T) *needs.Service {
	t.Helper()
	nd := needs.New(f.st, f.svc.cfg.Writer)
	f.svc.cfg.Needs = nd
	t.Cleanup(func() { f.svc.Close(context.Background()) })
	f.policy(t, NeedsMe)
	return nd
}

// waitFor waits until cond holds, failing the test if it does not within a generous bound; it
// asserts nothing about how long it took.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting: %s", what)
		}
	}
}

// heldCard is the held write's proposal and its Needs me decision, as saved.
func (f *fixture) heldCard(t *testing.T, nd *needs.Service, proposalID string) (status string, d needs.Decision) {
	t.Helper()
	var decision string
	if err := f.st.Reader().QueryRow("SELECT status, decision_id FROM assistant_proposals WHERE id = ?", proposalID).Scan(&status, &decision); err != nil {
		t.Fatal(err)
	}
	if decision == "" {
		return status, needs.Decision{}
	}
	d, err := nd.Get(context.Background(), decision)
	if err != nil {
		t.Fatal(err)
	}
	return status, d
}

// TestNeedsMeShowsEveryHeldWrite: under needs-me every held write is on Needs me from the moment
// it is held, those that always wait (a workflow, an agent's assignment) too.
func TestNeedsMeShowsEveryHeldWrite(t *testing.T) {
	for _, c := range []struct {
		name     string
		agents   bool
		call     func(f *agentFixture) enginetest.Step
		question string
	}{
		{"a write", false, func(*agentFixture) enginetest.Step {
			return enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Book flights"}}})
		}, "Apply this medium-risk change? Add 1 task: “Book flights”."},
		{"a workflow", false, func(*agentFixture) enginetest.Step {
			return enginetest.ToolCall(tools.WorkflowTool, workflowCall("Launch plan",
				wfStep{"id": "proj", "tool": "hub_create_project", "input": map[string]any{"name": "Launch"}},
				wfStep{"id": "tasks", "tool": "hub_create_tasks", "input": map[string]any{"tasks": []any{map[string]any{"title": "Kickoff"}}}}))
		}, "Apply this high-risk change? Workflow “Launch plan”, 2 steps under one Apply"},
		{"an agent's assignment", true, func(f *agentFixture) enginetest.Step {
			return enginetest.ToolCall("hub_assign_to_agent", map[string]any{"taskId": f.task(t, "Fix login"), "agent": "stand-in", "folder": t.TempDir()})
		}, "Apply this high-risk change? Assign “Fix login” to Stand-in"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f *agentFixture
			if c.agents {
				f = newAgentFixture(t)
			} else {
				f = &agentFixture{fixture: newFixture(t, "anthropic", time.Minute)}
			}
			nd := f.withNeeds(t)
			f.srv.Script(c.call(f), enginetest.Say("It waits on Needs me."))
			r, _, err := f.turn(t, "anthropic", "do it")
			if err != nil {
				t.Fatal(err)
			}
			row := r.Tools[0]
			if row.Status != "waiting" || row.ProposalID == "" {
				t.Fatalf("row %+v, want one waiting on Needs me", row)
			}
			open, err := nd.List(context.Background(), needs.Filter{})
			if err != nil || len(open) != 1 || !strings.HasPrefix(open[0].Question, c.question) || open[0].Options[0] != "Apply" {
				t.Fatalf("open decisions %+v, %v; want one asking %q", open, err, c.question)
			}
			if _, d := f.heldCard(t, nd, row.ProposalID); d.ID != open[0].ID {
				t.Errorf("the proposal names decision %q, Needs me shows %q", d.ID, open[0].ID)
			}
		})
	}
}

// TestNeedsMeSettlesOnce: a held write answered on Needs me or in the chat settles in both places,
// once; the second answer is refused with who settled it.
func TestNeedsMeSettlesOnce(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		first func(f *fixture, nd *needs.Service, proposal, decision string) error
		// settled is how the write stands once the first answer is acted on.
		status  string
		tasks   int
		by      string
		option  int
		then    func(f *fixture, nd *needs.Service, proposal, decision string) error
		refusal string
	}{
		{"Apply on Needs me, then Apply in the chat",
			func(f *fixture, nd *needs.Service, _, d string) error {
				_, err := nd.Answer(ctx, d, needs.Choose(0), needs.ByPhone)
				return err
			}, applied, 1, needs.ByPhone, 0,
			func(f *fixture, _ *needs.Service, p, _ string) error {
				_, err := f.svc.Apply(ctx, "", []string{p})
				return err
			},
			"Add 1 task: “Book flights” was already answered on Needs me by phone at "},
		{"Discard on Needs me, then Apply in the chat",
			func(f *fixture, nd *needs.Service, _, d string) error {
				_, err := nd.Answer(ctx, d, needs.Choose(1), needs.ByPhone)
				return err
			}, discarded, 0, needs.ByPhone, 1,
			func(f *fixture, _ *needs.Service, p, _ string) error {
				_, err := f.svc.Apply(ctx, "", []string{p})
				return err
			},
			"(“Discard”), so nothing more is done here."},
		{"Apply on Needs me, then Discard in the chat",
			func(f *fixture, nd *needs.Service, _, d string) error {
				_, err := nd.Answer(ctx, d, needs.Choose(0), needs.ByBrowser)
				return err
			}, applied, 1, needs.ByBrowser, 0,
			func(f *fixture, _ *needs.Service, p, _ string) error { return f.svc.Discard(ctx, p) },
			"was already answered on Needs me by you in the browser at "},
		{"Apply in the chat, then an answer on Needs me",
			func(f *fixture, _ *needs.Service, p, _ string) error {
				_, err := f.svc.Apply(ctx, "", []string{p})
				return err
			},
			applied, 1, needs.ByChat, 0,
			func(f *fixture, nd *needs.Service, _, d string) error {
				_, err := nd.Answer(ctx, d, needs.Choose(1), needs.ByPhone)
				return err
			},
			"Already answered by you in the assistant's chat at "},
		{"Discard in the chat, then an answer on Needs me",
			func(f *fixture, _ *needs.Service, p, _ string) error { return f.svc.Discard(ctx, p) },
			discarded, 0, needs.ByChat, 1,
			func(f *fixture, nd *needs.Service, _, d string) error {
				_, err := nd.Answer(ctx, d, needs.Choose(0), needs.ByPhone)
				return err
			},
			": “Discard”."},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "anthropic", time.Minute)
			nd := f.withNeeds(t)
			f.srv.Script(enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Book flights"}}}), enginetest.Say("It waits."))
			r, _, err := f.turn(t, "anthropic", "add a task")
			if err != nil {
				t.Fatal(err)
			}
			p := r.Tools[0].ProposalID
			_, d := f.heldCard(t, nd, p)
			if err := c.first(f, nd, p, d.ID); err != nil {
				t.Fatalf("the first answer: %v", err)
			}
			waitFor(t, "the first answer acted on", func() bool { s, _ := f.heldCard(t, nd, p); return s == c.status })
			err = c.then(f, nd, p, d.ID)
			var se *needs.SettledError
			if !(problem.Is(err, problem.KindConflict) || errors.As(err, &se)) || !strings.Contains(err.Error(), c.refusal) {
				t.Fatalf("the second answer: %v, want refused with %q", err, c.refusal)
			}
			status, d := f.heldCard(t, nd, p)
			if status != c.status || d.Status != needs.Answered || d.AnsweredBy != c.by || d.Answer.Option != c.option {
				t.Errorf("settled as %s, decision %s by %q option %v", status, d.Status, d.AnsweredBy, d.Answer)
			}
			if n := f.count(t, "SELECT count(*) FROM tasks WHERE title = 'Book flights'"); n != c.tasks {
				t.Errorf("%d tasks, want %d", n, c.tasks)
			}
			if open, _ := nd.List(ctx, needs.Filter{}); len(open) != 0 {
				t.Errorf("still open on Needs me: %+v", open)
			}
		})
	}
}

// TestNeedsMeRacesSettleOnce answers a held write on Needs me and applies it in the chat at the
// same moment, many times: it is applied once, and the decision's answer and the write agree.
func TestNeedsMeRacesSettleOnce(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	nd := f.withNeeds(t)
	for i := range 8 {
		f.srv.Script(enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Race"}}}), enginetest.Say("It waits."))
		r, _, err := f.turn(t, "anthropic", "add a task")
		if err != nil {
			t.Fatal(err)
		}
		p := r.Tools[0].ProposalID
		_, d := f.heldCard(t, nd, p)
		option := i % 2 // Apply or Discard on Needs me, against Apply in the chat
		var wg sync.WaitGroup
		var chatErr, needsErr error
		wg.Add(2)
		go func() { defer wg.Done(); _, chatErr = f.svc.Apply(ctx, "", []string{p}) }()
		go func() { defer wg.Done(); _, needsErr = nd.Answer(ctx, d.ID, needs.Choose(option), needs.ByPhone) }()
		wg.Wait()
		if (chatErr == nil) == (needsErr == nil) {
			t.Fatalf("round %d: the chat's Apply (%v) and the answer on Needs me (%v) must settle it once", i, chatErr, needsErr)
		}
		want := applied
		if needsErr == nil && option == optionDiscard {
			want = discarded
		}
		waitFor(t, "the write settled", func() bool { s, _ := f.heldCard(t, nd, p); return s == want })
		_, d = f.heldCard(t, nd, p)
		if wantBy := map[bool]string{true: needs.ByChat, false: needs.ByPhone}[chatErr == nil]; d.AnsweredBy != wantBy {
			t.Errorf("round %d: answered by %q, want %q", i, d.AnsweredBy, wantBy)
		}
	}
	applies := f.count(t, "SELECT count(*) FROM assistant_proposals WHERE status = 'applied'")
	if n := f.count(t, "SELECT count(*) FROM tasks WHERE title = 'Race'"); n != applies {
		t.Errorf("%d tasks for %d applied writes", n, applies)
	}
}

// TestNeedsMeFailedApplyIsRetriedInTheChat: Apply on Needs me that fails leaves the write failed,
// with its reason; the chat may then retry it.
func TestNeedsMeFailedApplyIsRetriedInTheChat(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	nd := f.withNeeds(t)
	task, err := f.rec.Tasks().Create(ctx, ledger.Actor{Kind: ledger.Person}, records.TaskInput{Title: records.Some("Old name")})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Script(enginetest.ToolCall("hub_update_task", map[string]any{"id": task.ID, "title": "New name"}), enginetest.Say("It waits."))
	r, _, err := f.turn(t, "anthropic", "rename it")
	if err != nil {
		t.Fatal(err)
	}
	p := r.Tools[0].ProposalID
	_, d := f.heldCard(t, nd, p)
	if _, err := f.rec.Tasks().Trash(ctx, ledger.Actor{Kind: ledger.Person}, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := nd.Answer(ctx, d.ID, needs.Choose(0), needs.ByPhone); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failed Apply recorded", func() bool { s, _ := f.heldCard(t, nd, p); return s == failed })
	if _, err := f.rec.Restore(ctx, ledger.Actor{Kind: ledger.Person}, "task", task.ID); err != nil {
		t.Fatal(err)
	}
	if rows, err := f.svc.Apply(ctx, "", []string{p}); err != nil || rows[0].Status != "done" {
		t.Fatalf("the chat's retry: %+v, %v", rows, err)
	}
	if got, _ := f.rec.Tasks().Get(ctx, task.ID); got.Title != "New name" {
		t.Errorf("after the retry the task is %q", got.Title)
	}
}

// TestNeedsMeAsksAgainAfterARestart: a restart expires the old card; Resume puts a new one on
// Needs me, named on the proposal, and answering it applies the write.
func TestNeedsMeAsksAgainAfterARestart(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	nd := f.withNeeds(t)
	f.srv.Script(enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "After restart"}}}), enginetest.Say("It waits."))
	r, _, err := f.turn(t, "anthropic", "add a task")
	if err != nil {
		t.Fatal(err)
	}
	p := r.Tools[0].ProposalID
	_, old := f.heldCard(t, nd, p)
	if _, err := nd.ExpireOrphans(ctx); err != nil { // as the next start does
		t.Fatal(err)
	}
	if err := f.svc.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	_, d := f.heldCard(t, nd, p)
	if d.ID == old.ID || d.Status != needs.Open {
		t.Fatalf("after Resume the proposal names %s (%s), before %s", d.ID, d.Status, old.ID)
	}
	if _, err := nd.Answer(ctx, d.ID, needs.Choose(0), needs.ByPhone); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new card's answer applied", func() bool { s, _ := f.heldCard(t, nd, p); return s == applied })
	if n := f.count(t, "SELECT count(*) FROM tasks WHERE title = 'After restart'"); n != 1 {
		t.Errorf("%d tasks", n)
	}
}

// TestNeedsQuestion: the Needs me question carries the held write's risk, and says when it cannot
// be undone, since the person answers there without the chat's card.
func TestNeedsQuestion(t *testing.T) {
	reg := tools.HubTools()
	cases := []struct {
		tool, want string
	}{
		{"hub_create_page", "Apply this low-risk change? Add page “Notes”."},
		{"hub_delete_tasks", "Apply this high-risk change? Add page “Notes”."},
		{"hub_assign_to_agent", "Apply this high-risk change? Add page “Notes”. It cannot be undone."},
		{"hub_gone", "Apply this change? Add page “Notes”."},
	}
	for _, c := range cases {
		if got := needsQuestion(reg.Get(c.tool), "Add page “Notes”."); got != c.want {
			t.Errorf("%s: %q, want %q", c.tool, got, c.want)
		}
	}
}
