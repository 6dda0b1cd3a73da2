//go:build unix

package agentproc

import (
	"errors"
	"os/exec"
	"syscall"
)

// OwnGroup starts cmd in a process group of its own, so the agent and
// everything it starts (shells, MCP servers, language servers) end together.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// SignalGroup sends SIGTERM (or SIGKILL when hard) to cmd's whole process
// group. A group already gone is not an error.
func SignalGroup(cmd *exec.Cmd, hard bool) error {
	if cmd.Process == nil {
		return nil
	}
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	// The group id is the leader's pid; it stays reserved while any member
	// lives, so this cannot reach another program's group.
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// dieWithRuntime has the kernel end cmd if the runtime dies, without moving it out of the
// runtime's process group.
func dieWithRuntime(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	dieWithParent(cmd.SysProcAttr)
}
