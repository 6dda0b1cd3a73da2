package app

import (
	"regexp"
	"strings"
	"testing"
)

// TestRoutinesCommands makes, lists, runs and deletes a routine through the command line,
// against a runtime started in-process.
func TestRoutinesCommands(t *testing.T) {
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir
	if code, out := ensemble(t, data, "routines", "list"); code != 0 || out != "There are no routines yet; make one with `ensemble routines create`.\n" {
		t.Fatalf("empty list: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "nodes", "create", "--name", "Ada", "--handle", "ada"); code != 0 {
		t.Fatalf("nodes create: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "routines", "create", "--node", "ada", "--instruction", "x", "--cron", "0 9 * * *", "--webhook"); code != 1 ||
		out != "ensemble: Give a routine one trigger: --cron, --on or --webhook.\n" {
		t.Fatalf("two triggers: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "routines", "create", "--node", "ada", "--instruction", "x", "--cron", "soon"); code != 1 ||
		!strings.Contains(out, "is not a five-field cron schedule") {
		t.Fatalf("bad cron: %d %q", code, out)
	}
	code, out := ensemble(t, data, "routines", "create", "--node", "ada", "--instruction", "Triage the new issue.", "--webhook")
	id := regexp.MustCompile(`rtn_[0-9a-z]+`).FindString(out)
	if code != 0 || id == "" || !regexp.MustCompile(`Bearer rth_[0-9a-f]{64}\n`).MatchString(out) {
		t.Fatalf("create: %d %q", code, out)
	}
	code, out = ensemble(t, data, "routines", "create", "--node", "ada", "--instruction", "Plan my day.", "--cron", "0 9 * * 1-5", "--timezone", "UTC")
	if code != 0 || !strings.Contains(out, `cron "0 9 * * 1-5" UTC`) {
		t.Fatalf("create a schedule: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "routines", "list", "--node", "@ada"); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "Plan my day.") {
		t.Fatalf("list: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "routines", "run", id); code != 0 || !strings.HasPrefix(out, "Started run rrn_") {
		t.Fatalf("run: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "routines", "delete", id); code != 0 || out != "Deleted the routine "+id+".\n" {
		t.Fatalf("delete: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "routines", "run", id); code != 1 || !strings.Contains(out, "There is no routine") {
		t.Fatalf("run a deleted one: %d %q", code, out)
	}
}
