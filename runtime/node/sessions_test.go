package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/sessions"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// gateAgent is a stand-in coding agent whose runs go on until the test finishes them (finish) or
// they are stopped. A run resuming a session keeps its id.
type gateAgent struct {
	mu    sync.Mutex
	specs []engines.Spec
	next  chan string // a summary ends the run going on
}

func newGateAgent() *gateAgent { return &gateAgent{next: make(chan string)} }

func (*gateAgent) Name() string { return "stand-in" }

func (d *gateAgent) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	d.mu.Lock()
	d.specs = append(d.specs, spec)
	session := spec.Resume
	if session == "" {
		session = fmt.Sprintf("agent-session-%d", len(d.specs))
	}
	d.mu.Unlock()
	h.Event(engines.Event{Kind: engines.EventStarted, Session: session, Model: "stand-in-1"})
	ctx, cancel := context.WithCancel(ctx)
	r := &gateRun{cancel: cancel, done: make(chan struct{}), session: session}
	go func() {
		defer close(r.done)
		select {
		case sum := <-d.next:
			r.res = engines.Result{SessionID: session, Summary: sum, Turns: 1}
		case <-ctx.Done():
			r.err = engines.ErrStopped
		}
	}()
	return r, nil
}

func (d *gateAgent) spec(i int) engines.Spec {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.specs[i]
}

func (d *gateAgent) starts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.specs)
}

type gateRun struct {
	cancel  context.CancelFunc
	done    chan struct{}
	session string
	res     engines.Result
	err     error
}

func (r *gateRun) Wait() (engines.Result, error) { <-r.done; return r.res, r.err }
func (r *gateRun) Stop(context.Context) error    { r.cancel(); return nil }

// sessFix is a node fixture with real runs of a gateAgent.
type sessFix struct {
	*fixture
	tt     *testing.T
	agent  *gateAgent
	js     *jobs.Service
	folder string
	data   string
}

func newSessFix(t *testing.T) *sessFix {
	sf := &sessFix{tt: t, agent: newGateAgent(), folder: t.TempDir(), data: t.TempDir()}
	sf.fixture = newFixture(t, sf.withAgents)
	t.Cleanup(func() {
		if sf.svc != nil {
			sf.svc.Close() // first: the runs' ends at closing wake no node
		}
		sf.js.Close()
	})
	return sf
}

func (sf *sessFix) withAgents(c *Config) {
	ss := sessions.New(sessions.Options{Store: c.Store, Writer: c.Writer})
	js := jobs.New(jobs.Options{Store: c.Store, Writer: c.Writer, Records: c.Records, DataDir: sf.data, Sessions: ss,
		Drivers: map[string]engines.Driver{"stand-in": sf.agent}})
	if err := js.Start(context.Background()); err != nil {
		sf.tt.Fatal(err)
	}
	sf.js = js
	c.Jobs, c.Sessions, c.Runs = js, ss, tools.NewRuns(js, ss, nil)
}

// restart stops the node service first, then the runs, and opens both again.
func (sf *sessFix) restart() {
	sf.svc.Close()
	sf.js.Close()
	sf.fixture.close()
	sf.fixture.open(sf.withAgents)
}

func dmOrigin(n Node) origin {
	return origin{node: n, roomID: n.DMRoomID, lane: convLane(n.DMRoomID, false), byOwner: true, who: "node", source: "chat"}
}

func (sf *sessFix) start(n Node, title string) jobs.Job {
	sf.t.Helper()
	j, fits, err := sf.svc.startSession(context.Background(), dmOrigin(n), RunRequest{Title: title, Prompt: "Do: " + title,
		Agent: "stand-in", Folder: sf.folder, NewSession: true})
	if err != nil || len(fits) > 0 {
		sf.t.Fatalf("start a session: %v (fits %v)", err, fits)
	}
	return j
}

// waitCard waits for the first card in room.
func (sf *sessFix) waitCard(room string) Message {
	sf.t.Helper()
	var card Message
	sf.waitFor("the card", func() bool {
		for _, m := range sf.messages(room) {
			if m.Kind == KindApproval {
				card = m
				return true
			}
		}
		return false
	})
	return card
}

func (sf *sessFix) waitJob(id string, ok func(jobs.Job) bool, what string) jobs.Job {
	sf.t.Helper()
	var j jobs.Job
	sf.waitFor(what, func() bool {
		var err error
		j, err = sf.js.Get(context.Background(), id)
		return err == nil && ok(j)
	})
	return j
}

func running(j jobs.Job) bool { return j.Status == jobs.Running && j.SessionID != "" }
func ended(j jobs.Job) bool   { return j.Status.Ended() }

func (sf *sessFix) info(root string) SessionInfo {
	sf.t.Helper()
	info, err := sf.svc.sessionInfo(context.Background(), sf.st.Reader(), root)
	if err != nil {
		sf.t.Fatal(err)
	}
	return info
}

func (sf *sessFix) count(q string, args ...any) int {
	var n int
	if err := sf.st.Reader().QueryRow(q, args...).Scan(&n); err != nil {
		sf.t.Fatal(err)
	}
	return n
}

// A node starts a session through node_session_start in its DM: the run is made, recorded on
// node_runs with its card, and when it ends the node is woken once, in its DM, with the summary,
// and reports it.
func TestSessionStartThroughTheToolAndTheEndWakesOnce(t *testing.T) {
	sf := newSessFix(t)
	n := sf.node("Dev")
	sf.model.Script(
		enginetest.ToolCall(ToolSessionStart, map[string]any{"title": "Fix the login", "prompt": "Fix the login retry.", "agent": "stand-in", "folder": sf.folder, "newSession": true}),
		enginetest.Say("Started it."),
		enginetest.Say("The login is fixed.").WhenLastUser("has ended"),
	)
	sf.post(n.DMRoomID, "Fix the login retry in my project.")
	sf.settle()
	var jobID string
	sf.st.Reader().QueryRow("SELECT job_id FROM node_runs").Scan(&jobID)
	if jobID == "" {
		t.Fatal("node_session_start made no node run")
	}
	sf.waitJob(jobID, running, "the run to start")
	var card *Message
	for _, m := range sf.messages(n.DMRoomID) {
		if m.Kind == KindRun {
			card = &m
		}
	}
	if card == nil {
		t.Fatal("no run card in the DM")
	}
	sf.agent.next <- "Fixed the retry loop."
	sf.waitJob(jobID, ended, "the run to end")
	sf.waitFor("the node's report", func() bool {
		for _, s := range sf.nodeTexts(n.DMRoomID) {
			if s == "The login is fixed." {
				return true
			}
		}
		return false
	})
	sf.settle()
	if got := sf.count("SELECT count(*) FROM node_turns WHERE operation_id = ?", "run:"+jobID+":end"); got != 1 {
		t.Fatalf("%d turns heard the run's end, want 1", got)
	}
	sf.svc.runChanged(context.Background(), jobID) // heard twice: no second turn
	if got := sf.count("SELECT count(*) FROM node_turns WHERE reason = 'run'"); got != 1 {
		t.Fatalf("%d run turns after the end was heard twice, want 1", got)
	}
	m, _ := sf.svc.Message(context.Background(), card.ID)
	var data RunCard
	json.Unmarshal(m.Data, &data)
	if data.JobID != jobID || data.Status != string(jobs.Done) || data.Session.ID != jobID || data.Session.Status != "idle" {
		t.Fatalf("the card after the end is %+v; want job %s done, session idle", data, jobID)
	}
	if data.Settings.Observed.Model != "stand-in-1" {
		t.Fatalf("the card's observed model is %q, want the one the agent reported", data.Settings.Observed.Model)
	}
	var note string
	sf.st.Reader().QueryRow("SELECT note FROM node_turns WHERE reason = 'run'").Scan(&note)
	if !strings.Contains(note, "Fixed the retry loop.") || !strings.Contains(note, "Nothing else is queued") {
		t.Fatalf("the run's note is %q; want its summary and the queue", note)
	}
}

// Messages sent to a busy session wait in its queue and run in order, each continuing the agent
// session; a steer goes first and stops the run going on, which then wakes nobody.
func TestSessionQueueAndSteer(t *testing.T) {
	sf := newSessFix(t)
	sf.model.Script(enginetest.Say("Noted.").Forever())
	n := sf.node("Dev")
	first := sf.start(n, "First")
	sf.waitJob(first.ID, running, "the first run to start")
	ctx := context.Background()
	q1, err := sf.svc.sendToSession(ctx, dmOrigin(n), first.ID, "", "Then this.", DeliverQueue)
	if err != nil || q1.State != runQueued {
		t.Fatalf("queue on a busy session: %+v, %v; want it queued", q1, err)
	}
	st, err := sf.svc.sendToSession(ctx, dmOrigin(n), first.ID, "", "Change of plan.", DeliverSteer)
	if err != nil {
		t.Fatal(err)
	}
	// The steer stopped the first run and started next, before the queued message.
	sf.waitJob(first.ID, ended, "the first run to stop")
	st = sf.waitRunStarted(st.ID)
	j := sf.waitJob(st.JobID, running, "the steer to run")
	if j.Continues != first.ID || sf.agent.spec(1).Resume != "agent-session-1" {
		t.Fatalf("the steer continues %q resuming %q; want the first run and its agent session", j.Continues, sf.agent.spec(1).Resume)
	}
	if info := sf.info(first.ID); len(info.Queue) != 1 || info.Queue[0].ID != q1.ID || info.Running == nil || info.Running.JobID != st.JobID {
		t.Fatalf("the session is %+v; want the steer running and the first message queued", info)
	}
	sf.agent.next <- "Steered."
	q1 = sf.waitRunStarted(q1.ID)
	sf.waitJob(q1.JobID, running, "the queued message to run")
	sf.agent.next <- "Then done."
	sf.waitJob(q1.JobID, ended, "the queued message to end")
	for _, id := range []string{first.ID, st.JobID, q1.JobID} {
		sf.waitHeard(id)
	}
	sf.settle()
	if got := sf.count("SELECT count(*) FROM node_turns WHERE operation_id = ?", "run:"+first.ID+":end"); got != 0 {
		t.Fatalf("the steered run woke its node %d times, want none", got)
	}
	if got := sf.count("SELECT count(*) FROM node_turns WHERE reason = 'run'"); got != 2 {
		t.Fatalf("%d run turns, want 2 (the steer and the queued message)", got)
	}
	if got := sf.count("SELECT count(*) FROM node_session_events WHERE session_root = ? AND kind IN ('queue', 'steer')", first.ID); got != 2 {
		t.Fatalf("%d session events, want 2", got)
	}
}

// waitHeard waits until the watcher has heard the end of the job's run.
func (sf *sessFix) waitHeard(jobID string) {
	sf.t.Helper()
	sf.waitFor("the run's end to be heard", func() bool {
		return sf.count("SELECT count(*) FROM node_runs WHERE job_id = ? AND ended_notified IS NOT NULL", jobID) == 1
	})
}

func (sf *sessFix) waitRunStarted(id string) nodeRun {
	sf.t.Helper()
	var r nodeRun
	sf.waitFor("the message to start", func() bool {
		var err error
		r, err = sf.svc.runByID(context.Background(), id)
		return err == nil && r.State == runStarted
	})
	return r
}

// Stop stops the run going on and drops the queue; replace drops the queue, stops the run and
// runs only the new message.
func TestSessionStopAndReplace(t *testing.T) {
	sf := newSessFix(t)
	sf.model.Script(enginetest.Say("Noted.").Forever())
	n := sf.node("Dev")
	ctx := context.Background()
	first := sf.start(n, "First")
	sf.waitJob(first.ID, running, "the first run")
	q, _ := sf.svc.sendToSession(ctx, dmOrigin(n), first.ID, "", "Queued one.", DeliverQueue)
	rep, err := sf.svc.sendToSession(ctx, dmOrigin(n), first.ID, "", "Instead, this.", DeliverReplace)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := sf.svc.runByID(ctx, q.ID); r.State != runCancelled {
		t.Fatalf("after replace the queued message is %s, want cancelled", r.State)
	}
	rep = sf.waitRunStarted(rep.ID)
	sf.waitJob(rep.JobID, running, "the replacement to run")
	stopped, dropped, err := sf.svc.stopSession(ctx, dmOrigin(n), first.ID, false)
	if err != nil || stopped != 1 || dropped != 0 {
		t.Fatalf("stop: %d stopped, %d dropped, %v; want 1, 0", stopped, dropped, err)
	}
	if j, _ := sf.js.Get(ctx, rep.JobID); j.Status != jobs.Stopped {
		t.Fatalf("the stopped run is %s", j.Status)
	}
	sf.waitHeard(first.ID)
	sf.waitHeard(rep.JobID)
	sf.settle()
	if got := sf.count("SELECT count(*) FROM node_turns WHERE reason = 'run'"); got != 0 {
		t.Fatalf("%d run turns; runs taken over by replace and stop wake nobody", got)
	}
	if info := sf.info(first.ID); info.Status != "idle" || info.Running != nil || len(info.Queue) != 0 {
		t.Fatalf("the stopped session is %+v, want idle", info)
	}
}

// A reorder made from a queue that changed since is refused and changes nothing; a cancel of a
// message that already started is refused too.
func TestSessionQueueCompareAndSet(t *testing.T) {
	sf := newSessFix(t)
	n := sf.node("Dev")
	ctx := context.Background()
	first := sf.start(n, "First")
	sf.waitJob(first.ID, running, "the first run")
	a, _ := sf.svc.sendToSession(ctx, dmOrigin(n), first.ID, "A", "A.", DeliverQueue)
	b, _ := sf.svc.sendToSession(ctx, dmOrigin(n), first.ID, "B", "B.", DeliverQueue)
	if err := sf.svc.editQueue(ctx, dmOrigin(n), first.ID, []string{b.ID, a.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if q := sf.info(first.ID).Queue; len(q) != 2 || q[0].ID != b.ID {
		t.Fatalf("after the reorder the queue is %+v, want B first", q)
	}
	c, _ := sf.svc.sendToSession(ctx, dmOrigin(n), first.ID, "C", "C.", DeliverQueue)
	err := sf.svc.editQueue(ctx, dmOrigin(n), first.ID, []string{a.ID, b.ID}, nil) // made before C came
	if problem.KindOf(err) != problem.KindConflict {
		t.Fatalf("a stale order gave %v, want a conflict", err)
	}
	if q := sf.info(first.ID).Queue; len(q) != 3 || q[0].ID != b.ID || q[2].ID != c.ID {
		t.Fatalf("after the refused order the queue is %+v, want it unchanged (B, A, C)", q)
	}
	err = sf.svc.editQueue(ctx, dmOrigin(n), first.ID, nil, []string{c.ID, first.ID})
	if problem.KindOf(err) != problem.KindConflict {
		t.Fatalf("cancelling a run that started gave %v, want a conflict", err)
	}
	if q := sf.info(first.ID).Queue; len(q) != 3 {
		t.Fatalf("a refused cancel took messages out: %+v", q)
	}
	if err := sf.svc.editQueue(ctx, dmOrigin(n), first.ID, nil, []string{c.ID}); err != nil {
		t.Fatal(err)
	}
	if q := sf.info(first.ID).Queue; len(q) != 2 {
		t.Fatalf("after the cancel the queue is %+v", q)
	}
}

// A session belongs to the node of its first run: another node neither sees it nor drives it,
// until it is handed over; then the first node no longer does.
func TestSessionIsolationAndHandOver(t *testing.T) {
	sf := newSessFix(t)
	a, b := sf.node("Ana"), sf.node("Bo")
	ctx := context.Background()
	first := sf.start(a, "Ana's work")
	if list, _ := sf.svc.NodeSessions(ctx, b.ID); len(list) != 0 {
		t.Fatalf("Bo sees %d sessions, want none", len(list))
	}
	if list, _ := sf.svc.NodeSessions(ctx, a.ID); len(list) != 1 || list[0].ID != first.ID {
		t.Fatalf("Ana sees %+v, want her session", list)
	}
	if _, err := sf.svc.ownSession(ctx, sf.st.Reader(), b.ID, first.ID); err != errSessionGone {
		t.Fatalf("Bo reaching Ana's session: %v", err)
	}
	if _, err := sf.svc.sendToSession(ctx, dmOrigin(b), first.ID, "", "Mine now.", DeliverQueue); err != errSessionGone {
		t.Fatalf("Bo sending to Ana's session: %v", err)
	}
	if _, _, err := sf.svc.stopSession(ctx, dmOrigin(b), first.ID, false); err != errSessionGone {
		t.Fatalf("Bo stopping Ana's session: %v", err)
	}
	if j, _ := sf.js.Get(ctx, first.ID); j.Status.Ended() {
		t.Fatal("Bo's refused stop stopped the run")
	}
	if err := sf.svc.moveSession(ctx, dmOrigin(a), first.ID, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := sf.svc.NodeSessions(ctx, a.ID); len(list) != 0 {
		t.Fatalf("after the hand-over Ana sees %d sessions", len(list))
	}
	if list, _ := sf.svc.NodeSessions(ctx, b.ID); len(list) != 1 {
		t.Fatalf("after the hand-over Bo sees %d sessions", len(list))
	}
}

// A run that ends while Ensemble is down wakes its node once, after the restart.
func TestRunEndedWhileDownWakesOnceAfterRestart(t *testing.T) {
	sf := newSessFix(t)
	n := sf.node("Dev")
	j := sf.start(n, "Long work")
	sf.waitJob(j.ID, running, "the run")
	sf.restart()
	sf.model.Script(enginetest.Say("It was cut off by the restart.").Forever())
	sf.waitJob(j.ID, func(j jobs.Job) bool { return j.Status == jobs.Interrupted }, "the run to be interrupted")
	sf.waitFor("the node to hear of it", func() bool {
		return sf.count("SELECT count(*) FROM node_turns WHERE operation_id = ?", "run:"+j.ID+":end") == 1
	})
	sf.settle()
	sf.svc.catchUpRuns(context.Background())
	sf.restart()
	sf.settle()
	if got := sf.count("SELECT count(*) FROM node_turns WHERE reason = 'run'"); got != 1 {
		t.Fatalf("%d run turns after two restarts, want 1", got)
	}
}

// Pausing a node stops every run it started that has not ended, takes its queued messages out,
// and says so in its DM without a model call.
func TestPauseStopsTheNodesRuns(t *testing.T) {
	sf := newSessFix(t)
	n := sf.node("Dev")
	ctx := context.Background()
	j := sf.start(n, "Refactor")
	sf.waitJob(j.ID, running, "the run")
	sf.svc.sendToSession(ctx, dmOrigin(n), j.ID, "", "After.", DeliverQueue)
	paused := StatusPaused
	if _, err := sf.svc.Update(ctx, n.ID, NodeChange{Status: &paused}); err != nil {
		t.Fatal(err)
	}
	if got, _ := sf.js.Get(ctx, j.ID); got.Status != jobs.Stopped {
		t.Fatalf("the paused node's run is %s, want stopped", got.Status)
	}
	sf.waitHeard(j.ID)
	sf.settle()
	var line string
	for _, m := range sf.messages(n.DMRoomID) {
		if m.Kind == KindStatusLn {
			line = m.Body
		}
	}
	if !strings.Contains(line, "Stopped 1 run") || !strings.Contains(line, "“Refactor”") || !strings.Contains(line, "1 queued message") {
		t.Fatalf("the DM says %q; want the run it stopped and the message it took out", line)
	}
	if len(sf.model.Requests()) != 0 {
		t.Fatal("pausing called the model")
	}
	if got := sf.count("SELECT count(*) FROM node_turns WHERE reason = 'run'"); got != 0 {
		t.Fatalf("%d run turns for a paused node's stopped run, want 0", got)
	}
	if sf.agent.starts() != 1 {
		t.Fatalf("the agent started %d times; the queued message must not start", sf.agent.starts())
	}
}

// With Work on your computer: Ask me first, node_session_start posts an owner-only card and
// starts nothing until the owner approves; then it runs as shown.
func TestSessionStartAsksFirst(t *testing.T) {
	sf := newSessFix(t)
	n := sf.node("Dev")
	ctx := context.Background()
	if _, err := sf.svc.Update(ctx, n.ID, NodeChange{Autonomy: &Autonomy{ComputerWork: "ask"}}); err != nil {
		t.Fatal(err)
	}
	sf.model.Script(
		enginetest.ToolCall(ToolSessionStart, map[string]any{"title": "Fix the login", "prompt": "Fix the login retry.", "agent": "stand-in", "folder": sf.folder, "newSession": true}),
		enginetest.Say("Started, as you approved."),
	)
	sf.post(n.DMRoomID, "Fix the login retry.")
	card := sf.waitCard(n.DMRoomID)
	if !card.Private || !strings.Contains(card.Body, "Fix the login") || sf.agent.starts() != 0 ||
		sf.count("SELECT count(*) FROM node_runs") != 0 {
		t.Fatalf("before the answer: card %+v, %d agent starts; want an owner-only card and nothing started", card, sf.agent.starts())
	}
	if _, err := sf.svc.Answer(ctx, card.ID, Approve, "browser"); err != nil {
		t.Fatal(err)
	}
	sf.settle()
	var jobID string
	sf.st.Reader().QueryRow("SELECT job_id FROM node_runs").Scan(&jobID)
	j := sf.waitJob(jobID, running, "the approved run")
	if j.Agent != "stand-in" || j.WorkDir != sf.folder {
		t.Fatalf("the approved run is %s in %s", j.Agent, j.WorkDir)
	}
	if texts := sf.nodeTexts(n.DMRoomID); len(texts) != 1 || texts[0] != "Started, as you approved." {
		t.Fatalf("the node said %q", texts)
	}
}

// Without newSession, a start that fits one of the node's own sessions starts nothing and names
// it; another node's session is never offered.
func TestSessionStartOffersItsOwnFits(t *testing.T) {
	sf := newSessFix(t)
	sf.model.Script(enginetest.Say("Noted.").Forever())
	a, b := sf.node("Ana"), sf.node("Bo")
	ctx := context.Background()
	first := sf.start(a, "Fix the rate limiter in src/auth/session.ts (issue #42)")
	sf.waitJob(first.ID, running, "the first run")
	sf.agent.next <- "Fixed the rate limiter in src/auth/session.ts."
	sf.waitJob(first.ID, ended, "the first run to end")
	again := RunRequest{Title: "Follow up on the rate limiter in src/auth/session.ts (issue #42)",
		Prompt: "Continue the rate limiter fix (ensemble://task/" + first.TaskID + ") in src/auth/session.ts for issue #42: add its test.", Agent: "stand-in", Folder: sf.folder}
	_, fits, err := sf.svc.startSession(ctx, dmOrigin(a), again)
	if err != nil {
		t.Fatal(err)
	}
	if len(fits) != 1 || fits[0].Session != first.ID {
		t.Fatalf("fits %+v; want Ana's session %s", fits, first.ID)
	}
	if sf.agent.starts() != 1 {
		t.Fatalf("a start with a fit started the agent (%d starts)", sf.agent.starts())
	}
	j, fits, err := sf.svc.startSession(ctx, dmOrigin(b), again)
	if err != nil || len(fits) != 0 || j.ID == "" {
		t.Fatalf("Bo's start: %+v, fits %+v, %v; want a new session, Ana's not offered", j, fits, err)
	}
}

// A message sent with a model runs on it; what it leaves out is kept from the session.
func TestSessionSendTakesRunSettings(t *testing.T) {
	sf := newSessFix(t)
	sf.model.Script(enginetest.Say("Noted.").Forever())
	n := sf.node("Dev")
	ctx := context.Background()
	first := sf.start(n, "First")
	sf.waitJob(first.ID, running, "the first run")
	sf.agent.next <- "Done."
	sf.waitJob(first.ID, ended, "the first run to end")
	r, err := sf.svc.sendWith(ctx, dmOrigin(n), first.ID, "", "Again, on the bigger model.", DeliverQueue, SettingSet{Model: "stand-in-2"})
	if err != nil {
		t.Fatal(err)
	}
	r = sf.waitRunStarted(r.ID)
	j := sf.waitJob(r.JobID, running, "the second run")
	if j.Settings.Model != "stand-in-2" || j.Agent != "stand-in" || j.WorkDir != sf.folder {
		t.Fatalf("the second run is %s on %q in %s; want stand-in on stand-in-2 in the session's folder", j.Agent, j.Settings.Model, j.WorkDir)
	}
	if got := sf.info(first.ID); got.Running == nil {
		t.Fatalf("the session shows no run going on: %+v", got)
	}
}
