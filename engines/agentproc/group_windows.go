//go:build windows

package agentproc

import (
	"os/exec"
	"strconv"
	"syscall"
)

// OwnGroup starts cmd in a process group of its own. Windows has no signal
// to send it; SignalGroup ends the tree instead.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// SignalGroup ends cmd and every process it started (taskkill /T), whether
// asked gently or not: Windows console programs have no SIGTERM. A Job
// Object would also catch children that outlive their parent; taskkill
// follows the parent links that still exist.
func SignalGroup(cmd *exec.Cmd, hard bool) error {
	if cmd.Process == nil {
		return nil
	}
	kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	if err := kill.Run(); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// dieWithRuntime does nothing here: the login shell is not asked on this system.
func dieWithRuntime(*exec.Cmd) {}
