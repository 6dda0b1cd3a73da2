//go:build !unix && !windows

package agentproc

import "os/exec"

// OwnGroup does nothing where there are no process groups.
func OwnGroup(cmd *exec.Cmd) {}

// SignalGroup kills cmd's process where there are no process groups.
func SignalGroup(cmd *exec.Cmd, hard bool) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// dieWithRuntime does nothing here: the login shell is not asked on this system.
func dieWithRuntime(*exec.Cmd) {}
