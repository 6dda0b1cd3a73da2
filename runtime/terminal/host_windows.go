//go:build windows

package terminal

import (
	"errors"
	"fmt"
	"io"
)

// hostsWork says terminal hosts run here: not on Windows, where sessions stay in the runtime's
// process (and terminals are not supported yet).
const hostsWork = false

var errHostGone = errors.New("the terminal's host is gone")

// HostMain says terminal hosts do not run on Windows.
func HostMain(stdin io.Reader, stdout io.Writer) int {
	fmt.Fprintf(stdout, "error: %v\n", ErrUnsupported)
	return 1
}

func startHost(h *HostOptions, spec hostSpec) (process, error) { return nil, ErrUnsupported }

func dialHost(dir, id, token string) (p detachProcess, cols, rows int, replay []byte, err error) {
	return nil, 0, 0, nil, ErrUnsupported
}

func removeHostFiles(dir, id string) {}

// detachProcess is a process that can be let go of.
type detachProcess interface {
	process
	detacher
}
