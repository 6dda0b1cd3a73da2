package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/profiles"
)

// TestRunCommandUnderProfile: `ensemble run --profile NAME` takes the profile's agent, folder and
// settings where the flags give none; without --agent it takes the default profile.
func TestRunCommandUnderProfile(t *testing.T) {
	ctx := context.Background()
	rt, err := startRuntime(ctx, runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"stand-in": scriptedAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	c, err := connect(ctx, &globals{data: rt.cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	careDir, starDir := t.TempDir(), t.TempDir()
	careDir, _ = filepath.EvalSymlinks(careDir)
	starDir, _ = filepath.EvalSymlinks(starDir)
	var care, star profiles.Profile
	for _, p := range []struct {
		body map[string]any
		into *profiles.Profile
	}{
		{map[string]any{"name": "Careful", "agent": "stand-in", "folder": careDir, "settings": map[string]any{"mode": "review", "maxTurns": 7}}, &care},
		{map[string]any{"name": "Starred", "agent": "stand-in", "folder": starDir, "settings": map[string]any{"git": "commit"}}, &star},
	} {
		if err := c.do(ctx, "POST", "/api/agent/profiles", p.body, p.into); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.do(ctx, "POST", "/api/agent/profiles/"+star.ID+"/star", nil, &star); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		args      []string
		profile   string
		folder    string
		mode, git string
		maxTurns  int
	}{
		{"named, a flag over it", []string{"--profile", "careful", "--mode", "unattended"}, "Careful", careDir, "unattended", "local", 7},
		{"the default", nil, "Starred", starDir, "ask", "commit", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--data", rt.cfg.DataDir, "run", "Make a file", "--detach"}, tc.args...)
			out, errOut, code := runCLI(t, "", args...)
			if code != 0 || !strings.Contains(out, "Under the run profile “"+tc.profile+"”.") {
				t.Fatalf("ensemble run = %d\n%s%s", code, out, errOut)
			}
			id, _, _ := strings.Cut(strings.TrimPrefix(out[strings.Index(out, "Run "):], "Run "), ":")
			var j jobs.Job
			if err := c.do(ctx, "GET", "/api/agent/jobs/"+id, nil, &j); err != nil {
				t.Fatal(err)
			}
			if j.Agent != "stand-in" || j.Folder != tc.folder || string(j.Settings.Mode) != tc.mode || string(j.Settings.Git) != tc.git ||
				j.Settings.MaxTurns != tc.maxTurns {
				t.Errorf("run %s: agent %s in %s with %+v", id, j.Agent, j.Folder, j.Settings)
			}
		})
	}
	_, errOut, code := runCLI(t, "", "--data", rt.cfg.DataDir, "run", "Make a file", "--profile", "nope", "--detach")
	if code != 1 || !strings.Contains(errOut, `There is no run profile "nope".`) {
		t.Errorf("unknown profile = %d %s", code, errOut)
	}
}
