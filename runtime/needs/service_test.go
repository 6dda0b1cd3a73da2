package needs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

type fixture struct {
	s   *Service
	st  *store.Store
	bus *events.Bus
	dir string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	return openFixture(t, dir)
}

func openFixture(t *testing.T, dir string) *fixture {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	t.Cleanup(func() { bus.Close(); st.Close() })
	return &fixture{s: New(st, ledger.New(st, bus)), st: st, bus: bus, dir: dir}
}

// asked starts Ask in a goroutine and waits until the decision is on the queue.
type asked struct {
	id     string
	answer Answer
	err    error
	done   chan struct{}
}

func (f *fixture) ask(t *testing.T, ctx context.Context, d Decision, opts ...AskOption) *asked {
	t.Helper()
	sub := f.bus.Subscribe(16)
	defer sub.Close()
	a := &asked{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.answer, a.err = f.s.Ask(ctx, d, opts...)
	}()
	select {
	case ev := <-sub.C:
		if ev.Kind != "needs.created" {
			t.Fatalf("first event %s, want needs.created", ev.Kind)
		}
		a.id = ev.Subject
	case <-time.After(10 * time.Second):
		t.Fatal("Ask made no decision")
	}
	return a
}

func (a *asked) wait(t *testing.T) {
	t.Helper()
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("Ask did not return")
	}
}

func question() Decision {
	return NewQuestion(src, "Keep the old API?", []string{"Keep it", "Drop it"}, 1, true)
}

func TestAskWokenByAnswer(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask(t, ctx, question())
	select {
	case <-a.done:
		t.Fatal("Ask returned before the answer")
	case <-time.After(20 * time.Millisecond):
	}
	d, err := f.s.Answer(ctx, a.id, Choose(0), ByBrowser)
	if err != nil {
		t.Fatal(err)
	}
	a.wait(t)
	if a.err != nil || a.answer != (Answer{0, "Keep it"}) {
		t.Fatalf("Ask got %+v, %v", a.answer, a.err)
	}
	if d.Status != Answered || d.AnsweredBy != ByBrowser || d.AnsweredAt == nil || *d.Answer != a.answer {
		t.Fatalf("answered decision %+v", d)
	}
	got, err := f.s.Get(ctx, a.id)
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got)
	dj, _ := json.Marshal(d)
	if string(gj) != string(dj) {
		t.Errorf("stored decision differs from the answer's:\n%s\n%s", gj, dj)
	}
}

func TestTwentyAnswersOneWins(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask(t, ctx, NewPermission(src, "npm install", judge.Touches{Programs: []string{"npm"}, Hosts: []string{"registry.npmjs.org"}}, "It reaches the internet."))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		wins    []int
		settled int
	)
	start := make(chan struct{})
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := f.s.Answer(ctx, a.id, Choose(i%3), ByCommandLine)
			mu.Lock()
			defer mu.Unlock()
			var se *SettledError
			switch {
			case err == nil:
				wins = append(wins, i%3)
			case errors.As(err, &se):
				settled++
			default:
				t.Errorf("answer %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(wins) != 1 || settled != 19 {
		t.Fatalf("%d answers won and %d were told it was settled; want 1 and 19", len(wins), settled)
	}
	a.wait(t)
	if a.err != nil || a.answer.Option != wins[0] {
		t.Fatalf("Ask got %+v, %v; the winner chose %d", a.answer, a.err, wins[0])
	}
	var n int
	f.st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = 'needs.answered'").Scan(&n)
	if n != 1 {
		t.Errorf("%d needs.answered events, want 1", n)
	}
}

func TestSecondAnswerSaysWhoAndWhen(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask(t, ctx, question())
	if _, err := f.s.Answer(ctx, a.id, Say("Keep both for a release"), ByBrowser); err != nil {
		t.Fatal(err)
	}
	_, err := f.s.Answer(ctx, a.id, Choose(1), ByCommandLine)
	var se *SettledError
	if !errors.As(err, &se) || se.Decision.AnsweredBy != ByBrowser || !errors.Is(err, ErrSettled) {
		t.Fatalf("second answer: %v", err)
	}
	want := settledSentence(se.Decision, time.Local)
	if err.Error() != want || se.Decision.Answer.Text != "Keep both for a release" {
		t.Errorf("second answer: %q", err)
	}
	a.wait(t)
}

func TestBadAnswerWritesNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask(t, ctx, NewPermission(src, "rm -rf dist", judge.Touches{Writes: []string{"dist"}}, ""))
	before := count(t, f, "events")
	for _, ans := range []Answer{Choose(7), Say("sure"), {Option: -3}} {
		if _, err := f.s.Answer(ctx, a.id, ans, ByBrowser); !problem.Is(err, problem.KindInvalid) {
			t.Errorf("answer %+v: %v, want an invalid problem", ans, err)
		}
	}
	if _, err := f.s.Answer(ctx, "dec_nope", Choose(0), ByBrowser); !problem.Is(err, problem.KindNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := f.s.Get(ctx, "dec_nope"); !problem.Is(err, problem.KindNotFound) {
		t.Errorf("get unknown id: %v", err)
	}
	if got := count(t, f, "events"); got != before {
		t.Errorf("bad answers wrote %d events", got-before)
	}
	if d, _ := f.s.Get(ctx, a.id); d.Status != Open {
		t.Errorf("status %s after bad answers", d.Status)
	}
	f.s.Answer(ctx, a.id, Choose(Refuse), ByBrowser)
	a.wait(t)
}

func count(t *testing.T, f *fixture, table string) int {
	t.Helper()
	var n int
	if err := f.st.Reader().QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAskCancelledExpires(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	a := f.ask(t, ctx, question())
	sub := f.bus.Subscribe(16)
	defer sub.Close()
	cancel()
	a.wait(t)
	if !errors.Is(a.err, context.Canceled) {
		t.Fatalf("Ask after cancel: %v", a.err)
	}
	d, err := f.s.Get(context.Background(), a.id)
	if err != nil || d.Status != Expired || d.ClosedAt == nil {
		t.Fatalf("after cancel: %+v %v", d, err)
	}
	if ev := <-sub.C; ev.Kind != "needs.expired" || ev.Subject != a.id {
		t.Errorf("event %s %s, want needs.expired", ev.Kind, ev.Subject)
	}
	_, err = f.s.Answer(context.Background(), a.id, Choose(0), ByBrowser)
	if !errors.Is(err, ErrSettled) {
		t.Errorf("answering an expired decision: %v", err)
	}
}

func TestUnattendedAnswersAtOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	sub := f.bus.Subscribe(16)
	defer sub.Close()
	got, err := f.s.Ask(ctx, NewPermission(src, "git push", judge.Touches{Programs: []string{"git"}}, "It publishes."), Unattended())
	if err != nil || got != (Answer{Refuse, "Refuse"}) {
		t.Fatalf("unattended: %+v, %v", got, err)
	}
	got, err = f.s.Ask(ctx, question(), Unattended())
	if err != nil || got != (Answer{1, "Drop it"}) {
		t.Fatalf("unattended question: %+v, %v", got, err)
	}
	all, _ := f.s.List(ctx, Filter{All: true})
	if len(all) != 2 {
		t.Fatalf("%d decisions kept, want 2 (listed on the task)", len(all))
	}
	for _, d := range all {
		if d.Status != Answered || d.AnsweredBy != ByUnattended {
			t.Errorf("%s: %s by %q", d.ID, d.Status, d.AnsweredBy)
		}
	}
	var kinds []string
	for range 4 {
		kinds = append(kinds, string((<-sub.C).Kind))
	}
	if want := "[needs.created needs.answered needs.created needs.answered]"; fmt.Sprint(kinds) != want {
		t.Errorf("events %v, want %s", kinds, want)
	}
	if open, _ := f.s.List(ctx, Filter{}); len(open) != 0 {
		t.Errorf("%d open after unattended answers", len(open))
	}
}

func TestInvalidAskStoresNothing(t *testing.T) {
	f := newFixture(t)
	_, err := f.s.Ask(context.Background(), NewQuestion(src, "?", nil, 0, false))
	if !problem.Is(err, problem.KindInvalid) {
		t.Fatalf("got %v, want an invalid problem", err)
	}
	if n := count(t, f, "decisions"); n != 0 {
		t.Errorf("%d decisions stored", n)
	}
}

func TestWithdrawRun(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	mine := f.ask(t, ctx, question())
	other := f.ask(t, ctx, NewQuestion(Source{RunID: "run_2", Title: "Other"}, "Go on?", []string{"Yes", "No"}, 0, false))
	n, err := f.s.WithdrawRun(ctx, "run_1")
	if err != nil || n != 1 {
		t.Fatalf("withdraw: %d, %v", n, err)
	}
	mine.wait(t)
	var se *SettledError
	if !errors.As(mine.err, &se) || se.Decision.Status != Withdrawn {
		t.Fatalf("Ask of a withdrawn decision: %v", mine.err)
	}
	if d, _ := f.s.Get(ctx, other.id); d.Status != Open {
		t.Errorf("another run's decision is %s", d.Status)
	}
	if n, _ := f.s.WithdrawRun(ctx, "run_1"); n != 0 {
		t.Errorf("withdrew %d again", n)
	}
	if _, err := f.s.WithdrawRun(ctx, ""); err == nil {
		t.Error("withdraw with no run id withdrew")
	}
	f.s.Answer(ctx, other.id, Choose(0), ByBrowser)
	other.wait(t)
	byRun, _ := f.s.List(ctx, Filter{All: true, RunID: "run_2"})
	if len(byRun) != 1 || byRun[0].ID != other.id {
		t.Errorf("list by run: %v", byRun)
	}
}

// TestExpireOrphansAfterRestart leaves decisions open as a runtime that died would, opens the
// database again, and expires them.
func TestExpireOrphansAfterRestart(t *testing.T) {
	dir := t.TempDir()
	f := openFixture(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ids []string
	for range 3 {
		ids = append(ids, f.ask(t, ctx, question()).id)
	}
	f.s.Answer(context.Background(), ids[1], Choose(0), ByBrowser)
	// A second runtime over the same file: nobody in it waits for the open ones.
	g := openFixture(t, dir)
	open, _ := g.s.List(context.Background(), Filter{})
	if len(open) != 2 || open[0].ID != ids[2] || open[1].ID != ids[0] {
		t.Fatalf("open before expiry: %v, want newest first %s, %s", idsOf(open), ids[2], ids[0])
	}
	n, err := g.s.ExpireOrphans(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("expired %d, %v; want 2", n, err)
	}
	for i, id := range ids {
		d, _ := g.s.Get(context.Background(), id)
		want := Expired
		if i == 1 {
			want = Answered
		}
		if d.Status != want {
			t.Errorf("%s is %s, want %s", id, d.Status, want)
		}
	}
	if open, _ := g.s.List(context.Background(), Filter{}); len(open) != 0 {
		t.Errorf("%d still open", len(open))
	}
}

func idsOf(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// TestEventsInOrder follows one decision's life in the event log: created, then answered, each
// carrying the whole decision, in seq order, live and from SQLite.
func TestEventsInOrder(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	sub := f.bus.Subscribe(64)
	defer sub.Close()
	a := f.ask(t, ctx, question())
	f.s.Answer(ctx, a.id, Say("Keep it"), ByCommandLine)
	a.wait(t)
	b := f.ask(t, ctx, question())
	f.s.WithdrawRun(ctx, "run_1")
	b.wait(t)
	var live []events.Event
	for range 4 {
		live = append(live, <-sub.C)
	}
	stored, err := events.Since(ctx, f.st.Reader(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	wantKinds := []events.Kind{KindCreated, KindAnswered, KindCreated, KindWithdrawn}
	wantStatus := []Status{Open, Answered, Open, Withdrawn}
	for i, ev := range live {
		if ev.Kind != wantKinds[i] || ev.Seq != stored[i].Seq || (i > 0 && ev.Seq <= live[i-1].Seq) {
			t.Errorf("event %d: %s seq %d (stored %s seq %d)", i, ev.Kind, ev.Seq, stored[i].Kind, stored[i].Seq)
		}
		var d Decision
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Status != wantStatus[i] || d.Question != "Keep the old API?" || len(d.Options) != 2 {
			t.Errorf("event %d carries %+v", i, d)
		}
	}
}

// TestRecommendationKeptWithWhy: a permission's chosen recommendation and the line saying why are
// stored with it and read back as they were given.
func TestRecommendationKeptWithWhy(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := NewPermission(Source{RunID: "job_1", Title: "Fix the tests"}, "go test ./...", judge.Touches{Programs: []string{"go"}}, "In Ask mode this waits.").
		Recommend(AllowOnce, "It changes only files in the run's own folder.")
	a := f.ask(t, ctx, d)
	got, err := f.s.Get(ctx, a.id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Recommended != AllowOnce || got.Why != "It changes only files in the run's own folder." {
		t.Fatalf("stored recommendation %d because %q", got.Recommended, got.Why)
	}
	cancel()
	a.wait(t)
}

// A run's sign-in question keeps its tab and site, for the card that opens its browser; other
// decisions have none.
func TestSignInKept(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	d := question()
	d.SignIn = &SignIn{Tab: "t4", Site: "portal.example", Purpose: "sign_in"}
	a := f.ask(t, ctx, d)
	b := f.ask(t, ctx, question())
	got, err := f.s.Get(ctx, a.id)
	if err != nil || got.SignIn == nil || *got.SignIn != *d.SignIn {
		t.Fatalf("the sign-in decision: %+v %v", got.SignIn, err)
	}
	if other, _ := f.s.Get(ctx, b.id); other.SignIn != nil {
		t.Fatalf("a plain question has a sign-in: %+v", other.SignIn)
	}
	f.s.Answer(ctx, a.id, Choose(0), ByBrowser)
	f.s.Answer(ctx, b.id, Choose(0), ByBrowser)
	a.wait(t)
	b.wait(t)
}
