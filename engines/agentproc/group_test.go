//go:build unix

package agentproc

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

func TestSignalGroup(t *testing.T) {
	if err := SignalGroup(&exec.Cmd{}, true); err != nil {
		t.Errorf("a command never started: %v", err)
	}
	for _, c := range []struct {
		name   string
		script string
		hard   bool
	}{
		// SIGTERM ends a group that does not refuse it.
		{"term", `sleep 300 & echo $! > "$1"/child; echo $$ > "$1"/self; wait`, false},
		// SIGKILL ends one that does.
		{"kill", `trap '' TERM; sleep 300 & echo $! > "$1"/child; echo $$ > "$1"/self; while :; do sleep 1; done`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command("/bin/sh", "-c", c.script, "sh", dir)
			OwnGroup(cmd)
			if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
				t.Fatalf("OwnGroup set %+v, want a group of its own", cmd.SysProcAttr)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			self, child := enginetest.ReadPID(t, dir+"/self"), enginetest.ReadPID(t, dir+"/child")
			if pgid, err := syscall.Getpgid(child); err != nil || pgid != self {
				t.Fatalf("child's group %d (%v), want the agent's %d", pgid, err, self)
			}
			if err := SignalGroup(cmd, c.hard); err != nil {
				t.Fatalf("SignalGroup: %v", err)
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the agent did not end")
			}
			deadline := time.Now().Add(5 * time.Second)
			for enginetest.Alive(child) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if enginetest.Alive(child) {
				t.Errorf("its child %d still running", child)
			}
			// A group already gone is not an error.
			if err := SignalGroup(cmd, c.hard); err != nil {
				t.Errorf("SignalGroup after the end: %v", err)
			}
		})
	}
}
