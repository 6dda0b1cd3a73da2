package app

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/terminal"
)

// newTerminalHostCmd is `ensemble terminal-host`, which the runtime starts for each of a node's
// terminals: it holds the shell's PTY in a process of its own, so the shell outlives the runtime
// (a window closed, an upgrade), and the next runtime attaches to it again. Its settings come on
// stdin, never on its command line.
func newTerminalHostCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "terminal-host",
		Short:  "Hold one of a node's terminals for the runtime (started by the runtime)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := terminal.HostMain(os.Stdin, os.Stdout); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
}

// terminalHost is how the nodes' terminals are held outside the runtime: by this very program,
// with their sockets in the data folder. Nil, and the terminals stay in the runtime, when the
// program cannot be found.
func terminalHost(dataDir string) *terminal.HostOptions {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return &terminal.HostOptions{Program: exe, DataDir: dataDir}
}
