package app

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func newStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Say whether the runtime is running, where, and its version",
		Long: `Say whether an Ensemble runtime is running for the data folder, at which address,
with which process id and version. Exits 1 when it is not running.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			f, err := readAPIFile(dir)
			switch {
			case errors.Is(err, errNotRunning):
				fmt.Fprintf(out, "Ensemble is not running (data folder %s).\n", dir)
				return exitError{1}
			case err != nil:
				return err
			case !healthy(cmd.Context(), f.URL):
				fmt.Fprintf(out, "Ensemble is not answering at %s (pid %d); it may have crashed. Start it again with `ensemble serve`.\n", f.URL, f.PID)
				return exitError{1}
			}
			fmt.Fprintf(out, "Ensemble %s is running at %s (pid %d).\nData folder: %s\n", f.Version, f.URL, f.PID, dir)
			return nil
		},
	}
}
