package app

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/store"
)

func newBackupCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of the database to FILE",
		Long: `Write a consistent copy of the Ensemble database to FILE, which must not exist yet.
It is safe while the runtime runs: the copy is taken inside one read transaction.
To restore, stop Ensemble and put the copy in place of ensemble.db in the data folder.`,
		Example: "  ensemble backup ~/ensemble-$(date +%F).db",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			dest := args[0]
			if _, err := os.Stat(dest); err == nil {
				return fmt.Errorf("%s already exists; choose a new file name", dest)
			}
			if err := store.BackupFile(cmd.Context(), dbPath(dir), dest); err != nil {
				return err
			}
			st, err := os.Stat(dest)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Backed up %s to %s (%.1f MB).\n", dbPath(dir), dest, float64(st.Size())/1e6)
			return nil
		},
	}
}
