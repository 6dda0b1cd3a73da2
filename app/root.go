// Package app wires the Ensemble binary: its commands, the data folder and api.json, the runtime
// that `ensemble serve` and the desktop window start, and the clients of a running runtime.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/computer"
)

// globals are the flags every command shares.
type globals struct {
	data string
	log  *slog.Logger
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if os.Getenv(computer.AskpassSocketVar) != "" {
		// sudo runs Ensemble's own program as its askpass helper for a sudo card (SUDO_ASKPASS
		// takes a program, not a command line): hand over the password, nothing else.
		return computer.Askpass()
	}
	cmd := newRootCmd(stderr)
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintln(stderr, "ensemble:", err)
	return 1
}

// exitError ends a command with a code and nothing more to print (the command printed it).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func newRootCmd(stderr io.Writer) *cobra.Command {
	g := &globals{log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	root := &cobra.Command{
		Use:   "ensemble",
		Short: "Run your own coding agents under one judge, on your own computer",
		Long: `Ensemble keeps your tasks, projects and pages, runs your coding agents on this computer
under one permission judge, and asks you what needs you in one place. Everything stays in
one SQLite database in the data folder.

Start the runtime with 'ensemble serve' and open the link it prints. The other commands
talk to that running runtime.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: true,
		},
	}
	// --version is a flag of Ensemble's own: cobra's (Command.Version) prints through
	// text/template, whose calling of methods by name keeps every method of every type in the
	// binary, 31 MB of it.
	version := root.Flags().Bool("version", false, "print Ensemble's version")
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		switch {
		case *version:
			printVersion(cmd.OutOrStdout())
			return nil
		case hasWindow:
			// The desktop app opens its window when started without a command, as from a launcher.
			return runDesktop(cmd.Context(), g)
		}
		return cmd.Help()
	}
	root.PersistentFlags().StringVar(&g.data, "data", "", "data folder (default $ENSEMBLE_DATA, else the OS's application data folder)")
	root.AddCommand(newServeCmd(g), newStatusCmd(g), newOpenCmd(g), newTasksCmd(g), newNeedsCmd(g), newBackupCmd(g), newRestoreCmd(g), newJudgeCmd(), newDesktopCmd(g), newRunCmd(g))
	root.AddCommand(newMCPCmd(g), newKeysCmd(g), newSecretsCmd(g), newSessionsCmd(g), newGitCredentialCmd())
	root.AddCommand(newRelayCmd(g), newPairCmd(g), newAgentsCmd(g))
	root.AddCommand(newChatCmd(g), newNodesCmd(g), newDMCmd(g), newVersionCmd())
	root.AddCommand(newRoutinesCmd(g), newCaptureCmd(g), newTerminalHostCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Ensemble's version (as --version does)",
		Args:  cobra.NoArgs,
		Run:   func(cmd *cobra.Command, args []string) { printVersion(cmd.OutOrStdout()) },
	}
}

func printVersion(w io.Writer) { fmt.Fprintf(w, "ensemble %s\n", Version) }
