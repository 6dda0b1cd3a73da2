//go:build unix

package enginetest

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// Alive reports whether pid is a running process; a zombie waiting for a
// parent that does not reap is gone too.
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) < 3 || f[2] != "Z"
}

// ReadPID waits up to ten seconds for a process id written as a line to
// path, and fails t without one.
func ReadPID(t testing.TB, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(s)
			if err == nil {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// StopEndsGroupScript is a stand-in agent's shell that ignores SIGTERM and its input closing, and
// leaves a child of its own running; it writes both pids into dir.
func StopEndsGroupScript(dir string) string {
	return `trap '' TERM
sleep 300 &
echo $! > ` + dir + `/child
echo $$ > ` + dir + `/self
while :; do sleep 1; done
`
}

// CheckStopEndsGroup stops run, started on StopEndsGroupScript(dir), and checks that Stop ends the
// whole process group: Wait answers engines.ErrStopped and neither the agent nor its child lives.
func CheckStopEndsGroup(t *testing.T, dir string, run engines.Run) {
	t.Helper()
	self, child := ReadPID(t, dir+"/self"), ReadPID(t, dir+"/child")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := run.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := run.Wait(); !errors.Is(err, engines.ErrStopped) {
		t.Errorf("Wait: got %v, want ErrStopped", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (Alive(self) || Alive(child)) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if Alive(self) || Alive(child) {
		t.Errorf("still running after Stop: stand-in %d %v, its child %d %v", self, Alive(self), child, Alive(child))
	}
}
