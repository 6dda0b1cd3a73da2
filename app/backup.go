package app

import (
	"fmt"
	"os"
	"strings"

	"filippo.io/age"
	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/backup"
	"github.com/ensemblework/ensemble/runtime/store"
)

func newBackupCmd(g *globals) *cobra.Command {
	var to []string
	var passphrase bool
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of the database to FILE, or an encrypted backup of the data folder",
		Long: `Write a consistent copy of the Ensemble database to FILE, which must not exist yet.
It is safe while the runtime runs: the copy is taken inside one read transaction.

With --to (an age recipient, age1…) or --passphrase, FILE is an age-encrypted backup of the
whole data folder that matters: the database, the keys its secrets need and your files. Only the
recipient's identity or the passphrase opens it; ` + "`ensemble restore`" + ` puts it into a fresh data
folder, on this computer or another. Without either, restore a plain copy by stopping Ensemble and
putting it in place of ensemble.db in the data folder.`,
		Example: `  ensemble backup ~/ensemble-$(date +%F).db
  ensemble backup ~/ensemble.age --to age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
  ensemble backup ~/ensemble.age --passphrase`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			dest := args[0]
			if _, err := os.Stat(dest); err == nil {
				return fmt.Errorf("%s already exists; choose a new file name", dest)
			}
			if len(to) == 0 && !passphrase {
				if err := store.BackupFile(cmd.Context(), dbPath(dir), dest); err != nil {
					return err
				}
			} else if err := encryptedBackup(cmd, dir, dest, to, passphrase); err != nil {
				os.Remove(dest)
				return err
			}
			st, err := os.Stat(dest)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Backed up %s to %s (%.1f MB).\n", dir, dest, float64(st.Size())/1e6)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&to, "to", nil, "encrypt for this age recipient (age1…); repeat for more")
	cmd.Flags().BoolVar(&passphrase, "passphrase", false, "encrypt with a passphrase, typed at the terminal or piped in")
	return cmd
}

func encryptedBackup(cmd *cobra.Command, dir, dest string, to []string, passphrase bool) error {
	var rs []age.Recipient
	for _, s := range to {
		r, err := age.ParseX25519Recipient(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not an age recipient (age1…): %w", s, err)
		}
		rs = append(rs, r)
	}
	if passphrase {
		if len(rs) > 0 {
			return fmt.Errorf("a backup is for recipients or a passphrase, not both")
		}
		p, err := readSecret(cmd, "Passphrase")
		if err != nil {
			return err
		}
		r, err := age.NewScryptRecipient(p)
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := backup.Write(cmd.Context(), dir, f, rs...); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newRestoreCmd(g *globals) *cobra.Command {
	var identity string
	var passphrase bool
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Put an encrypted backup into a fresh data folder",
		Long: `Decrypt an age-encrypted backup made by ` + "`ensemble backup --to`" + ` or ` + "`--passphrase`" + ` and put
it into the data folder (--data, or the default one), which must hold no database yet. Start
Ensemble there afterwards; its saved secrets open again.`,
		Example: `  ensemble restore ~/ensemble.age --identity ~/.config/age/key.txt --data ~/ensemble-restored
  ensemble restore ~/ensemble.age --passphrase`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			ids, err := restoreIdentities(cmd, identity, passphrase)
			if err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			n, err := backup.Restore(f, dir, ids...)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Restored %d files into %s. Start Ensemble there with `ensemble serve --data %s`.\n", n, dir, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&identity, "identity", "", "an age identity file (AGE-SECRET-KEY-…) that opens the backup")
	cmd.Flags().BoolVar(&passphrase, "passphrase", false, "open it with its passphrase, typed at the terminal or piped in")
	return cmd
}

func restoreIdentities(cmd *cobra.Command, identity string, passphrase bool) ([]age.Identity, error) {
	switch {
	case identity != "" && passphrase:
		return nil, fmt.Errorf("give --identity or --passphrase, not both")
	case identity != "":
		f, err := os.Open(identity)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		ids, err := age.ParseIdentities(f)
		if err != nil {
			return nil, fmt.Errorf("%s is not an age identity file: %w", identity, err)
		}
		return ids, nil
	case passphrase:
		p, err := readSecret(cmd, "Passphrase")
		if err != nil {
			return nil, err
		}
		id, err := age.NewScryptIdentity(p)
		if err != nil {
			return nil, err
		}
		return []age.Identity{id}, nil
	}
	return nil, fmt.Errorf("say what opens the backup: --identity FILE or --passphrase")
}
