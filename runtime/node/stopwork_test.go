package node

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
)

func TestStoppedLine(t *testing.T) {
	cases := []struct {
		running, queued, plans, runs int
		want                         string
	}{
		{0, 0, 0, 0, "Nothing was running here, so there was nothing to stop."},
		{1, 0, 0, 0, "Stopped 1 reply in progress. What was already done stays."},
		{0, 0, 1, 2, "Stopped 1 plan and 2 agent runs. What was already done stays."},
		{1, 3, 1, 1, "Stopped 1 plan, 1 agent run, 1 reply in progress and 3 queued turns. What was already done stays."},
	}
	for _, c := range cases {
		if got := stoppedLine(c.running, c.queued, c.plans, c.runs); got != c.want {
			t.Errorf("stoppedLine(%d, %d, %d, %d) = %q, want %q", c.running, c.queued, c.plans, c.runs, got, c.want)
		}
	}
}

// A message that is only "stop" stops the agent runs the nodes started in that room and takes
// their queued messages out, without a model call; the stopped run wakes nobody. A run started
// in another room goes on.
func TestStopMessageStopsTheRoomsRuns(t *testing.T) {
	sf := newSessFix(t)
	ctx := context.Background()
	n, other := sf.node("Dev"), sf.node("Ops")
	j := sf.start(n, "Refactor")
	sf.waitJob(j.ID, running, "the run")
	if _, err := sf.svc.sendToSession(ctx, dmOrigin(n), j.ID, "", "After.", DeliverQueue); err != nil {
		t.Fatal(err)
	}
	k := sf.start(other, "Deploy") // queued behind the first in the same folder

	if _, err := sf.svc.PostMessage(ctx, n.DMRoomID, Post{Body: "stop"}); err != nil {
		t.Fatal(err)
	}
	sf.waitJob(j.ID, ended, "the stopped run")
	if got, _ := sf.js.Get(ctx, j.ID); got.Status != jobs.Stopped {
		t.Fatalf("the run in the room is %s, want stopped", got.Status)
	}
	if got := sf.waitJob(k.ID, running, "the other room's run, after the stopped one"); got.Status.Ended() {
		t.Fatalf("the run in another room is %s; stop is for this room", got.Status)
	}
	sf.waitHeard(j.ID)
	sf.settle()
	var line string
	for _, m := range sf.messages(n.DMRoomID) {
		if m.Kind == KindStatusLn {
			line = m.Body
		}
	}
	if !strings.Contains(line, "1 agent run") {
		t.Fatalf("the status line is %q; want the agent run it stopped", line)
	}
	if got := sf.count("SELECT count(*) FROM node_runs WHERE state = 'queued'"); got != 0 {
		t.Fatalf("%d queued messages left in the stopped session", got)
	}
	if got := sf.count("SELECT count(*) FROM node_turns WHERE reason = 'run'"); got != 0 {
		t.Fatalf("%d run turns for a stopped run, want 0", got)
	}
	if len(sf.model.Requests()) != 0 {
		t.Fatal("stop called the model")
	}
	if sf.agent.starts() != 2 {
		t.Fatalf("the agent started %d times; the queued message must not start", sf.agent.starts())
	}
}

// "stop" in a crew stops the plan made there, and the agent run its dispatched step started.
func TestStopMessageStopsThePlanAndItsRun(t *testing.T) {
	sf := newSessFix(t)
	ctx := context.Background()
	if out, err := exec.Command("git", "-C", sf.folder, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	lead, dev := sf.node("Lead"), sf.node("Dev")
	r := sf.crew("Hello", lead.ID, lead, dev)
	yes := true
	plan := PlanInput{Goal: "Add a hello command", Constraints: PlanConstraints{Folder: sf.folder, Agent: "stand-in"},
		Steps: []PlanStep{{ID: "build", To: dev.Slug, Kind: KindBuild, Brief: "Write hello."}}}
	sf.model.Script(
		enginetest.ToolCall(ToolPlan, plan).When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "hello command"}),
		enginetest.Say("Planned.").When(enginetest.Match{ToolResult: &yes}).Forever(),
	)
	sf.post(r.ID, "Please add a hello command.")
	var job string
	sf.waitFor("the build's agent run", func() bool {
		sf.st.Reader().QueryRow("SELECT job_id FROM node_attempts WHERE job_id != ''").Scan(&job)
		return job != ""
	})
	sf.waitJob(job, running, "the build's run")
	asked := len(sf.model.Requests())
	if _, err := sf.svc.PostMessage(ctx, r.ID, Post{Body: "stop"}); err != nil {
		t.Fatal(err)
	}
	if got := sf.waitJob(job, ended, "the stopped run"); got.Status != jobs.Stopped {
		t.Fatalf("the step's run is %s, want stopped", got.Status)
	}
	sf.settle()
	var state string
	sf.st.Reader().QueryRow("SELECT state FROM node_missions").Scan(&state)
	if state != MissionStopped {
		t.Fatalf("the mission is %s, want stopped", state)
	}
	var line string
	for _, m := range sf.messages(r.ID) {
		if m.Kind == KindStatusLn {
			line = m.Body
		}
	}
	if !strings.Contains(line, "1 plan") {
		t.Fatalf("the status line is %q; want the plan it stopped", line)
	}
	if len(sf.model.Requests()) != asked {
		t.Fatal("stop called the model")
	}
}
