//go:build !unix && !windows

package claude

import "os/exec"

func ownGroup(cmd *exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, hard bool) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
