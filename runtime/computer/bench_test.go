package computer

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkDecideCommand is the decision order for one command line (the judge's floor inside it,
// then the folders it reaches and the kept answers), as computer_run makes it before each call.
func BenchmarkDecideCommand(b *testing.B) {
	p := Policy{Home: "/home/me", DataDir: "/home/me/.local/share/ensemble", Own: []string{"/w/nodes", "/w/runs"}, Sandboxed: true,
		Kept: []Scope{{ScopeFolder, "/home/me/code"}, {ScopeFolder, "/home/me/Documents"}}, Temp: []string{"/tmp"}}
	c := Call{Op: OpRun, Folder: "/home/me/code/app", Command: "npm ci && npm test -- --reporter=dot 2>&1 | tail -n 40 > /tmp/test.log"}
	b.ReportAllocs()
	for b.Loop() {
		if d := Decide(c, p); !d.Allowed() {
			b.Fatal(d.Reason)
		}
	}
}

// BenchmarkRun is computer_run's whole path for `true` (the sandbox, its process group, the
// output kept and redacted) beside the baseline of starting `bash -c true` directly.
func BenchmarkRun(b *testing.B) {
	f := newFixture(b, Options{})
	defer f.c.Close()
	ctx := context.Background()
	b.Run("computer_run", func(b *testing.B) {
		for b.Loop() {
			if r, err := f.c.Run(ctx, RunRequest{NodeID: "n1", Folder: f.own, Command: "true"}); err != nil || r.ExitCode != 0 {
				b.Fatal(r, err)
			}
		}
		ok, _ := f.c.Sandboxed()
		if ok {
			b.ReportMetric(1, "sandboxed")
		}
	})
	b.Run("baseline-bash", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("bash", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
