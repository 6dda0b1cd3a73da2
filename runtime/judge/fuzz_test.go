package judge

import (
	"testing"
	"time"
)

func FuzzDecide(f *testing.F) {
	for _, c := range floorCommands {
		f.Add(c, "")
	}
	for _, c := range []string{"ls -la", "git status", "cd src && ls", "echo $(date)", "bash -c 'npm test'",
		"cat <<EOF\nx\nEOF", "f(){ f|f& }; f", "find . -exec rm {} +", "tar xzf a.tgz -C /tmp", "git clone https://github.com/a/b"} {
		f.Add(c, "sub")
	}
	f.Fuzz(func(t *testing.T, cmd, cwd string) {
		for _, s := range []Settings{with(askMode), with(unattended, noSandbox, offline)} {
			var v Verdict
			done := make(chan struct{})
			go func() { v = Decide(Call{Tool: ToolShell, Command: cmd, Cwd: cwd}, s); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%q: no verdict after 5 s", cmd)
			}
			if v.Decision != Allow && v.Reason == "" {
				t.Fatalf("%q: %v without a reason", cmd, v.Decision)
			}
			if v.Rule == "internal" {
				t.Fatalf("%q: the judge panicked", cmd)
			}
		}
	})
}

// FuzzReadLine runs the command reader itself, without Decide's recover: a panic here fails.
func FuzzReadLine(f *testing.F) {
	for _, c := range floorCommands {
		f.Add(c)
	}
	for _, c := range []string{"source <(echo ls)", ". /dev/stdin <<< 'ls'", "git -c alias.x=push x", "rm -rf ${HOME:?}",
		"find ~ -exec rm {} \\;", "bash <(printf 'a\\nb')", "echo x | source /dev/stdin"} {
		f.Add(c)
	}
	s := with(askMode)
	f.Fuzz(func(t *testing.T, cmd string) {
		r := readLine(&s, cmd, folder)
		for _, c := range r.cmds {
			_ = c.source()
		}
	})
}
