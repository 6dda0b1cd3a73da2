package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/profiles"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/tools/toolstest"
)

// TestAssignUnderProfile: hub_assign_to_agent takes the profile named, else the default (starred,
// else first saved), else none; what the call names wins over the profile.
func TestAssignUnderProfile(t *testing.T) {
	ctx := context.Background()
	e := newToolEnv(t)
	a := toolstest.NewAgents(t, e.st, e.w, e.rec)
	f := struct {
		js   *jobs.Service
		prof *profiles.Service
	}{a.Jobs, a.Profiles}
	task, err := e.rec.Tasks().Create(ctx, byPerson, records.TaskInput{Title: records.Some("Fix login")})
	if err != nil {
		t.Fatal(err)
	}
	taskID := task.ID
	tc := &ToolContext{Records: e.rec, Actor: ledger.Actor{Kind: ledger.Assistant, ID: "conv_test"}, Runs: NewRuns(a.Jobs, a.Sessions, a.Profiles)}
	str := func(v string) *string { return &v }

	// None saved: Quick settings, so the agent must be named as before.
	if _, err := planAssign(ctx, tc, assignOf(t, map[string]any{"taskId": taskID})); err == nil || !strings.Contains(err.Error(), "Name the agent") {
		t.Fatalf("no profiles: %v", err)
	}
	careDir, starDir := t.TempDir(), t.TempDir()
	care, err := f.prof.Create(ctx, profiles.Input{Name: str("Careful"), Agent: str("stand-in"), Folder: str(careDir),
		Settings: &jobs.SettingsInput{Mode: str("review"), Model: str("p1")}})
	if err != nil {
		t.Fatal(err)
	}
	star, err := f.prof.Create(ctx, profiles.Input{Name: str("Starred"), Agent: str("stand-in"), Folder: str(starDir),
		Settings: &jobs.SettingsInput{Git: str("commit")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name               string
		star               bool
		input              map[string]any
		agent, folder      string
		mode, git, model   string
		preview, errorWant string
	}{
		{name: "first saved is the default", input: map[string]any{"taskId": taskID},
			agent: "stand-in", folder: careDir, mode: "review", git: "local", model: "p1",
			preview: "Assign “Fix login” to Stand-in in " + HomeShort(careDir) + " (model p1), under the run profile “Careful”."},
		{name: "the call wins", input: map[string]any{"taskId": taskID, "model": "m9", "folder": starDir},
			agent: "stand-in", folder: starDir, mode: "review", git: "local", model: "m9"},
		{name: "starred is the default", star: true, input: map[string]any{"taskId": taskID},
			agent: "stand-in", folder: starDir, mode: "ask", git: "commit"},
		{name: "named by name", star: true, input: map[string]any{"taskId": taskID, "profile": "careful"},
			agent: "stand-in", folder: careDir, mode: "review", git: "local", model: "p1"},
		{name: "named by id", star: true, input: map[string]any{"taskId": taskID, "profile": care.ID},
			agent: "stand-in", folder: careDir, mode: "review", git: "local", model: "p1"},
		{name: "unknown", input: map[string]any{"taskId": taskID, "profile": "Nope"}, errorWant: `There is no run profile "Nope".`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.star {
				if _, err := f.prof.Star(ctx, star.ID); err != nil {
					t.Fatal(err)
				}
			}
			a, err := planAssign(ctx, tc, assignOf(t, c.input))
			if c.errorWant != "" {
				if err == nil || !strings.Contains(err.Error(), c.errorWant) {
					t.Fatalf("error %v, want %q", err, c.errorWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			set, err := a.req.Settings.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if a.req.Agent != c.agent || a.req.Folder != c.folder || string(set.Mode) != c.mode || string(set.Git) != c.git || set.Model != c.model {
				t.Errorf("request %+v with %+v", a.req, set)
			}
			if c.preview != "" && a.preview() != c.preview {
				t.Errorf("preview %q, want %q", a.preview(), c.preview)
			}
		})
	}

	// Applied, the run has the profile's settings.
	tool := HubTools().Get("hub_assign_to_agent")
	res, err := tool.Outside(ctx, tc, raw(t, map[string]any{"taskId": taskID, "profile": "Careful"}),
		func(*ledger.Tx, Result) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	j, err := f.js.Get(ctx, res.Data.(map[string]any)["runId"].(string))
	if err != nil || j.Settings.Mode != "review" || j.Settings.Model != "p1" || j.Folder != careDir {
		t.Fatalf("run %+v, %v", j, err)
	}

	// A run continuing a session keeps the session's: no default profile, and a named one is refused.
	if a, err := planAssign(ctx, tc, assignOf(t, map[string]any{"taskId": taskID, "continueRunId": j.ID})); err != nil || a.profile != "" || a.req.Settings.Mode != nil {
		t.Errorf("continuing took the profile %q (%+v), %v", a.profile, a.req.Settings, err)
	}
	_, err = planAssign(ctx, tc, assignOf(t, map[string]any{"taskId": taskID, "continueRunId": j.ID, "profile": "Careful"}))
	if err == nil || !strings.Contains(err.Error(), "leave out the profile") {
		t.Errorf("continuing under a profile: %v", err)
	}
}

// assignOf is hub_assign_to_agent's input as the tool decodes it.
func assignOf(t *testing.T, input any) assignInput {
	t.Helper()
	in, err := decodeInput[assignInput](raw(t, input))
	if err != nil {
		t.Fatal(err)
	}
	return in
}
