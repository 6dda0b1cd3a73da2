//go:build windows

package terminal

// startProcess says terminals are not supported on Windows yet (ConPTY is the way there).
func startProcess(shell string, args []string, folder string, env []string, cols, rows int) (process, error) {
	return nil, ErrUnsupported
}
