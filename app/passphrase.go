package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

// askPassphrase is how a runtime starting with a locked secret.key gets its passphrase:
// ENSEMBLE_PASSPHRASE (a service), else typed at the terminal it was started from.
func askPassphrase(stderr io.Writer) func() (string, error) {
	return func() (string, error) {
		if v := os.Getenv(secrets.PassphraseVar); v != "" {
			return v, nil
		}
		if !term.IsTerminal(os.Stdin.Fd()) {
			return "", secrets.ErrLocked
		}
		fmt.Fprint(stderr, "Passphrase for this computer's secret.key (not shown): ")
		b, err := term.ReadPassword(os.Stdin.Fd())
		fmt.Fprintln(stderr)
		if err != nil {
			return "", fmt.Errorf("read the passphrase: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
}

func newSecretsPassphraseCmd(g *globals) *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:   "passphrase [--remove]",
		Short: "Put a passphrase on this computer's secret.key, change it, or take it off",
		Long: `Passphrase locks this computer's secret.key (the key every saved secret and key is
encrypted with) inside an age file encrypted with scrypt, so a copy of the data folder opens
nothing without it. Ensemble then asks for it when it starts: typed at the terminal
'ensemble serve' runs in, or from ENSEMBLE_PASSPHRASE for a service. The saved values do not
change, and a running Ensemble keeps working.

The passphrases are read from the terminal without echo, or one per line from standard input.

Examples:
  ensemble secrets passphrase            # set one, or change it
  ensemble secrets passphrase --remove   # take it off`,
		Args: usageArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			locked, err := secrets.KeyLocked(dir)
			if err != nil {
				return fmt.Errorf("This computer has no secret.key yet; start Ensemble once with `ensemble serve` to make one.")
			}
			lines := lineReader(cmd)
			current := ""
			if locked {
				if current, err = lines("The current passphrase"); err != nil {
					return err
				}
			} else if remove {
				return errors.New("This computer's secret.key has no passphrase to remove.")
			}
			next := ""
			if !remove {
				if next, err = lines("The new passphrase (8 characters or more)"); err != nil {
					return err
				}
				again, err := lines("The new passphrase again")
				if err != nil {
					return err
				}
				if again != next {
					return errors.New("The two new passphrases differ; nothing changed.")
				}
			}
			if err := secrets.SetPassphrase(dir, current, next); err != nil {
				return err
			}
			switch {
			case remove:
				fmt.Fprintln(cmd.OutOrStdout(), "secret.key has no passphrase now.")
			default:
				fmt.Fprintln(cmd.OutOrStdout(), "secret.key is locked with the passphrase: Ensemble asks for it when it starts (or reads ENSEMBLE_PASSPHRASE).")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "take the passphrase off")
	return cmd
}

// lineReader reads one answer per call: without echo at a terminal, else the next line piped in.
func lineReader(cmd *cobra.Command) func(prompt string) (string, error) {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && term.IsTerminal(f.Fd()) {
		return func(prompt string) (string, error) {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s (not shown): ", prompt)
			b, err := term.ReadPassword(f.Fd())
			fmt.Fprintln(cmd.ErrOrStderr())
			return strings.TrimRight(string(b), "\r\n"), err
		}
	}
	all, err := io.ReadAll(io.LimitReader(in, 1<<16))
	rest := strings.Split(strings.ReplaceAll(string(all), "\r\n", "\n"), "\n")
	return func(prompt string) (string, error) {
		if err != nil {
			return "", err
		}
		if len(rest) == 0 || rest[0] == "" && len(rest) == 1 {
			return "", fmt.Errorf("%s: nothing more came in on standard input.", prompt)
		}
		v := rest[0]
		rest = rest[1:]
		return v, nil
	}
}
