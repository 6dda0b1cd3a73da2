package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/needs"
)

// runCLI runs ensemble in-process with stdin, as Main does, and returns what it printed and its code.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCmd(&errOut)
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(context.Background())
	var ee exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		code = 1
		fmt.Fprintln(&errOut, "ensemble:", err)
	}
	return out.String(), errOut.String(), code
}

// waiting is a run's Ask in the background.
type waiting struct {
	id     string
	answer needs.Answer
	err    error
	done   chan struct{}
}

func askInBackground(t *testing.T, rt *Runtime, d needs.Decision) *waiting {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &waiting{done: make(chan struct{})}
	t.Cleanup(func() { cancel(); <-w.done })
	before, _ := rt.needs.List(ctx, needs.Filter{All: true})
	go func() {
		defer close(w.done)
		w.answer, w.err = rt.needs.Ask(ctx, d)
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if all, _ := rt.needs.List(ctx, needs.Filter{All: true}); len(all) > len(before) {
			w.id = all[0].ID
			return w
		}
	}
	t.Fatal("the decision never reached Needs me")
	return nil
}

func (w *waiting) wait(t *testing.T) {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run is still waiting")
	}
}

// row reads a decision's settlement from the database.
func row(t *testing.T, rt *Runtime, id string) (status, by, text string) {
	t.Helper()
	var b, tx *string
	err := rt.store.Reader().QueryRow("SELECT status, answered_by, answer_text FROM decisions WHERE id = ?", id).Scan(&status, &b, &tx)
	if err != nil {
		t.Fatal(err)
	}
	if b != nil {
		by = *b
	}
	if tx != nil {
		text = *tx
	}
	return status, by, text
}

func TestNeedsCmd(t *testing.T) {
	rt := startTestRuntime(t)
	data := rt.cfg.DataDir
	if out, _, code := runCLI(t, "", "needs", "--data", data); code != 0 || out != "Nothing needs you.\n" {
		t.Fatalf("empty queue: %d %q", code, out)
	}
	perm := askInBackground(t, rt, needs.NewPermission(needs.Source{RunID: "run_7", Title: "Fix the login retry"},
		"npm install left-pad", judge.Touches{Programs: []string{"npm"}, Hosts: []string{"registry.npmjs.org"}},
		"It reaches the internet."))
	q := askInBackground(t, rt, needs.NewQuestion(needs.Source{Title: "Rename the package"}, "Which name?",
		[]string{"ensemble", "chorus"}, 0, true))

	out, errOut, code := runCLI(t, "", "needs", "--data", data)
	for _, want := range []string{
		perm.id + "  Permission · Fix the login retry (run_7)",
		"  Run: npm install left-pad\n  Why: It reaches the internet.\n  Touches: runs npm; reaches registry.npmjs.org\n",
		"  1. Allow once\n  2. Allow for this run\n  3. Refuse  (recommended)\n",
		q.id + "  Question · Rename the package",
		"  Which name?\n  1. ensemble  (recommended)\n  2. chorus\n  or answer in your own words\n",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("list (code %d, stderr %q) lacks %q:\n%s", code, errOut, want, out)
		}
	}
	if strings.Index(out, q.id) > strings.Index(out, perm.id) {
		t.Errorf("not newest first:\n%s", out)
	}

	// Answer the permission by number, from 1.
	out, errOut, code = runCLI(t, "", "needs", "answer", perm.id, "2", "--data", data)
	if code != 0 || out != "Answered “Allow for this run” to: npm install left-pad\n" {
		t.Fatalf("answer: %d %q %q", code, out, errOut)
	}
	perm.wait(t)
	if perm.err != nil || perm.answer != (needs.Answer{Option: needs.AllowForRun, Text: "Allow for this run"}) {
		t.Errorf("the run got %+v, %v", perm.answer, perm.err)
	}
	if status, by, text := row(t, rt, perm.id); status != "answered" || by != needs.ByCommandLine || text != "Allow for this run" {
		t.Errorf("database: %s by %q: %q", status, by, text)
	}

	// Too late: someone answered first. Nothing changes.
	_, errOut, code = runCLI(t, "", "needs", "answer", perm.id, "refuse", "--data", data)
	if code != 1 || !strings.Contains(errOut, "ensemble: Already answered by you at the command line at ") ||
		!strings.Contains(errOut, "“Allow for this run”") {
		t.Errorf("second answer: %d %q", code, errOut)
	}
	// Out of range, and free text where none is allowed, are refused before anything is sent.
	p2 := askInBackground(t, rt, needs.NewPermission(needs.Source{Title: "Deploy"}, "git push", judge.Touches{}, ""))
	if _, errOut, code := runCLI(t, "", "needs", "answer", p2.id, "4", "--data", data); code != 1 || !strings.Contains(errOut, "choose 1 to 3") {
		t.Errorf("option 4: %d %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "", "needs", "answer", p2.id, "--text", "maybe", "--data", data); code != 1 || !strings.Contains(errOut, "not free text") {
		t.Errorf("free text on a permission: %d %q", code, errOut)
	}
	if status, _, _ := row(t, rt, p2.id); status != "open" {
		t.Errorf("after refused answers: %s", status)
	}
	if _, errOut, code := runCLI(t, "", "needs", "answer", "--data", data); code != 1 || !strings.Contains(errOut, "say which decision") {
		t.Errorf("no id: %d %q", code, errOut)
	}

	// Free text.
	if out, errOut, code := runCLI(t, "", "needs", "answer", q.id, "--text", "troupe", "--data", data); code != 0 || !strings.Contains(out, "“troupe”") {
		t.Fatalf("free text: %d %q %q", code, out, errOut)
	}
	q.wait(t)
	if q.answer != (needs.Answer{Option: needs.FreeText, Text: "troupe"}) {
		t.Errorf("the run got %+v", q.answer)
	}

	// --all shows settled ones.
	out, _, _ = runCLI(t, "", "needs", "--all", "--data", data)
	if !strings.Contains(out, "Answered “troupe” (command line)") || !strings.Contains(out, p2.id) {
		t.Errorf("--all:\n%s", out)
	}
}

func TestNeedsInteractive(t *testing.T) {
	rt := startTestRuntime(t)
	data := rt.cfg.DataDir
	first := askInBackground(t, rt, needs.NewPermission(needs.Source{Title: "Deploy"}, "git push origin main",
		judge.Touches{Programs: []string{"git"}}, "It publishes your branch."))
	second := askInBackground(t, rt, needs.NewQuestion(needs.Source{Title: "Tests"}, "Which runner?",
		[]string{"go test", "gotestsum"}, 1, false))
	third := askInBackground(t, rt, needs.NewQuestion(needs.Source{Title: "Notes"}, "Anything else?", nil, 0, true))

	// The first: Enter alone chooses nothing (not even the recommended Refuse), then 3. The
	// second: 7 is out of range, then 1. The third: skipped.
	out, errOut, code := runCLI(t, "\n3\n7\n1\ns\n", "needs", "-i", "--data", data)
	if code != 0 {
		t.Fatalf("interactive: %d %q\n%s", code, errOut, out)
	}
	for _, want := range []string{
		"(1 of 3) " + first.id, "Choose (1-3, s to skip, q to quit; 3 is recommended): ",
		"Nothing is chosen for you: type 1 to 3, s to skip, q to quit (3 is recommended).", "Answered “Refuse”.",
		"(2 of 3) " + second.id, "There is no option 7: choose 1 to 2.", "Answered “go test”.",
		"(3 of 3) " + third.id, "Choose (your answer, s to skip, q to quit):   Skipped.",
		"Answered 2 of 3.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	first.wait(t)
	second.wait(t)
	if first.answer.Option != needs.Refuse || second.answer.Text != "go test" {
		t.Errorf("runs got %+v and %+v", first.answer, second.answer)
	}
	if status, by, _ := row(t, rt, first.id); status != "answered" || by != needs.ByCommandLine {
		t.Errorf("first: %s by %q", status, by)
	}
	if status, _, _ := row(t, rt, third.id); status != "open" {
		t.Errorf("the skipped one is %s", status)
	}

	// The one left: typed text, and input that ends early stops without error.
	out, _, code = runCLI(t, "Ship it on Friday\n", "needs", "-i", "--data", data)
	if code != 0 || !strings.Contains(out, "Answered “Ship it on Friday”.") || !strings.Contains(out, "Answered 1 of 1.") {
		t.Errorf("typed answer: %d\n%s", code, out)
	}
	third.wait(t)
	if out, _, _ := runCLI(t, "", "needs", "-i", "--data", data); out != "Nothing needs you.\n" {
		t.Errorf("after all answered: %q", out)
	}
}

func TestNeedsHelp(t *testing.T) {
	out, _, code := runCLI(t, "", "needs", "--help")
	for _, want := range []string{"ensemble needs -i", "ensemble needs answer dec_0123456789abcdef 1", "--interactive", "--all"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}

// TestUnattendedQuestionIsKept: a run in Run unattended gets the recommended option at once, and
// the decision stays on Needs me, answered by the run, so the task still lists it.
func TestUnattendedQuestionIsKept(t *testing.T) {
	rt := startTestRuntime(t)
	a := needsAsker{rt.needs}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := a.Ask(ctx, jobs.Question{Kind: jobs.AgentQuestion, RunID: "run_u", Title: "Pick a colour",
		Text: "Which colour?", Options: []string{"red", "blue"}, Recommended: 1, Unattended: true})
	if err != nil || reply.Option != 1 || reply.Text != "blue" {
		t.Fatalf("reply %+v, %v", reply, err)
	}
	kept, err := rt.needs.List(ctx, needs.Filter{All: true, RunID: "run_u"})
	if err != nil || len(kept) != 1 {
		t.Fatalf("decisions %+v, %v", kept, err)
	}
	if status, by, text := row(t, rt, kept[0].ID); status != "answered" || by != needs.ByUnattended || text != "blue" {
		t.Errorf("database: %s by %q: %q", status, by, text)
	}
}
