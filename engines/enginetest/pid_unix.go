//go:build unix

package enginetest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
