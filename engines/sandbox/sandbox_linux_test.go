package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestRealBubblewrap runs commands inside the real bubblewrap under a run's policy and checks
// what they could and could not do.
func TestRealBubblewrap(t *testing.T) {
	sys := Local()
	if err := sys.Check(context.Background(), "Ensemble's sandbox", "bwrap"); err != nil {
		enginetest.CannotRun(t, err.Error())
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	data := filepath.Join(home, ".local", "share", "ensemble")
	folder := filepath.Join(data, "workspace", "runs", "r1")
	other := filepath.Join(data, "workspace", "runs", "r2")
	for _, d := range []string{filepath.Join(home, ".ssh"), folder, other, filepath.Join(home, "victim"), filepath.Join(folder, ".git", "hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".ssh", "id_ed25519"), "PRIVATE")
	write(filepath.Join(home, ".bashrc"), "# mine\n")
	write(filepath.Join(home, "victim", "keep.txt"), "keep")
	write(filepath.Join(data, "api.json"), `{"token":"launch"}`)
	write(filepath.Join(other, "theirs.txt"), "theirs")
	sb := engines.Sandbox{On: true,
		Write:     []string{folder},
		DenyWrite: []string{filepath.Join(folder, ".git", "hooks")},
		DenyRead:  []string{filepath.Join(home, ".ssh"), data},
		// The home is under /tmp here, which the sandbox makes its own: read it as a real one is.
		AllowRead: []string{home, filepath.Join(data, "workspace", "runs")},
	}
	state := filepath.Join(home, ".local", "share", "agent")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(script string) (string, error) {
		bin, args, err := sys.Command(sb, Extra{Write: []string{state}}, folder, "/bin/sh", []string{"-c", script})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, args...).CombinedOutput()
		return string(out), err
	}
	cases := []struct {
		name, script string
		ok           bool
	}{
		{"writes in its folder", "echo made > made.txt && cat made.txt", true},
		{"writes its own state", "echo s > " + state + "/s.txt", true},
		{"reads another run's folder", "cat " + other + "/theirs.txt", true},
		{"writes the home folder", "echo x >> " + home + "/.bashrc", false},
		{"deletes a folder in home", "rm -rf " + home + "/victim", false},
		{"python writes .bashrc", "python3 -c \"open('" + home + "/.bashrc','a').write('evil')\"", false},
		{"reads a key", "cat " + home + "/.ssh/id_ed25519", false},
		{"reads the launch token", "cat " + data + "/api.json", false},
		{"writes a hook", "echo x > .git/hooks/pre-commit", false},
		{"writes another run's folder", "echo x > " + other + "/mine.txt", false},
		{"sees only its own processes", "test $(ls -d /proc/[0-9]* | wc -l) -lt 10", true},
	}
	for _, c := range cases {
		out, err := run(c.script)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok=%v; output %q", c.name, err, c.ok, out)
		}
		if strings.Contains(out, "PRIVATE") || strings.Contains(out, "launch") {
			t.Errorf("%s: a secret came out: %q", c.name, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "# mine\n" {
		t.Errorf(".bashrc was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(home, "victim", "keep.txt")); err != nil {
		t.Errorf("the folder in home was deleted: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(folder, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("the run's own file: %q, %v", b, err)
	}
}
