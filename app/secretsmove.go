package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"
	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// Moving secrets between two of the person's computers (the desktop and the home runner): the
// receiving one has an age identity of its own (ageIdentityFile in its data folder); the sending
// one exports its secrets encrypted for that identity's recipient, and the receiver imports them
// through its running runtime, so they are hidden in its logs at once.

// ageIdentityFile is the data folder's age identity, made on first use (0600).
const ageIdentityFile = "age-identity.txt"

// movedSecret is one secret in an export.
type movedSecret struct {
	Name  string       `json:"name"`
	Kind  secrets.Kind `json:"kind"`
	Allow []string     `json:"allow"`
	Value string       `json:"value"`
}

type secretsExport struct {
	Version int           `json:"version"`
	Secrets []movedSecret `json:"secrets"`
}

// dataIdentity is the data folder's age identity, made when it has none.
func dataIdentity(dir string) (*age.X25519Identity, error) {
	p := filepath.Join(dir, ageIdentityFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		id, err := age.GenerateX25519Identity()
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(f, "# Ensemble's age identity for this data folder: secrets exported to it open here.\n%s\n", id)
		return id, f.Close()
	}
	if err != nil {
		return nil, err
	}
	ids, err := age.ParseIdentities(strings.NewReader(string(b)))
	if err != nil || len(ids) != 1 {
		return nil, fmt.Errorf("%s is not one age identity: %v", p, err)
	}
	id, ok := ids[0].(*age.X25519Identity)
	if !ok {
		return nil, fmt.Errorf("%s is not an X25519 identity", p)
	}
	return id, nil
}

func newSecretsRecipientCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "recipient",
		Short: "Show this data folder's age recipient, to export secrets to it",
		Long: `Show the age recipient (age1…) of this data folder's own identity, made on first use. On
the computer the secrets come from, run 'ensemble secrets export FILE --to <this recipient>';
then, here, 'ensemble secrets import FILE'.`,
		Args: usageArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			id, err := dataIdentity(dir)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), id.Recipient())
			return nil
		},
	}
}

func newSecretsExportCmd(g *globals) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "export FILE --to RECIPIENT",
		Short: "Write every secret to FILE, encrypted for another computer's age recipient",
		Long: `Write every secret kept here (run secrets with their allowed origins, and model-provider
keys) to FILE, encrypted for RECIPIENT, the other computer's 'ensemble secrets recipient'. Only
that computer opens it; import it there with 'ensemble secrets import FILE'.`,
		Example: `  ensemble secrets export ~/to-runner.age --to age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p`,
		Args:    usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := age.ParseX25519Recipient(strings.TrimSpace(to))
			if err != nil {
				return fmt.Errorf("--to takes the other computer's age recipient (age1…), from 'ensemble secrets recipient' there: %w", err)
			}
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			list, err := readAllSecrets(cmd, dir)
			if err != nil {
				return err
			}
			if err := writeExport(args[0], r, list); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Exported %s to %s, encrypted for %s.\n", tools.Plural(len(list), "secret"), args[0], to)
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the other computer's age recipient (age1…)")
	return cmd
}

// readAllSecrets reads every secret with its value from the data folder, as its runtime would.
func readAllSecrets(cmd *cobra.Command, dir string) ([]movedSecret, error) {
	if _, err := os.Stat(dbPath(dir)); err != nil {
		return nil, fmt.Errorf("there is no Ensemble database in %s", dir)
	}
	st, err := store.Open(cmd.Context(), dbPath(dir))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sec, err := secrets.New(cmd.Context(), secrets.Options{DataDir: dir, Store: st, Writer: ledger.New(st, events.NewBus())})
	if err != nil {
		return nil, err
	}
	list, err := sec.List(cmd.Context())
	if err != nil {
		return nil, err
	}
	out := []movedSecret{}
	for _, s := range list {
		v, err := sec.Get(cmd.Context(), s.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, movedSecret{Name: s.Name, Kind: s.Kind, Allow: s.Allow, Value: v})
	}
	return out, nil
}

func writeExport(path string, r age.Recipient, list []movedSecret) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	enc, err := age.Encrypt(f, r)
	if err == nil {
		err = json.NewEncoder(enc).Encode(secretsExport{Version: 1, Secrets: list})
	}
	if err == nil {
		err = enc.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

func newSecretsImportCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Keep the secrets of an export made for this data folder's recipient",
		Long: `Open FILE, written by 'ensemble secrets export --to' with this data folder's recipient, and keep
each secret in it here through the running runtime (a secret of the same name is replaced).`,
		Args: usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			id, err := dataIdentity(dir)
			if err != nil {
				return err
			}
			list, err := readExport(args[0], id)
			if err != nil {
				return err
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var names []string
			for _, s := range list {
				if err := keepMoved(cmd, c, s); err != nil {
					return fmt.Errorf("%s: %w (the ones before it are kept)", s.Name, err)
				}
				names = append(names, s.Name)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Imported %s: %s.\n", tools.Plural(len(names), "secret"), strings.Join(names, ", "))
			return nil
		},
	}
}

func readExport(path string, id age.Identity) ([]movedSecret, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec, err := age.Decrypt(f, id)
	if err != nil {
		return nil, fmt.Errorf("%s does not open here: it was exported for another recipient (%w)", path, err)
	}
	var ex secretsExport
	d := json.NewDecoder(io.LimitReader(dec, 8<<20))
	d.DisallowUnknownFields()
	if err := d.Decode(&ex); err != nil || ex.Version != 1 {
		return nil, fmt.Errorf("%s is not an export of Ensemble's secrets", path)
	}
	return ex.Secrets, nil
}

func keepMoved(cmd *cobra.Command, c *client, s movedSecret) error {
	if s.Kind == secrets.Provider {
		id := strings.TrimPrefix(s.Name, "provider:")
		return c.do(cmd.Context(), http.MethodPut, "/api/settings/providers/"+url.PathEscape(id)+"/key", map[string]any{"key": s.Value}, nil)
	}
	allow := s.Allow
	if allow == nil {
		allow = []string{}
	}
	return c.do(cmd.Context(), http.MethodPut, "/api/secrets/"+url.PathEscape(s.Name), map[string]any{"value": s.Value, "allow": allow}, nil)
}
