package app

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

func newSecretsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "Keep secrets and model-provider keys on this computer, encrypted",
		Long: `Keep secrets on this computer, encrypted with its own key (secret.key in the data folder).
No model is ever given a value, and no list, log or event shows one.

Run secrets are named as environment variables (STRIPE_API_KEY). --allow names the
origins a secret may be sent to (https://api.stripe.com); names that would change how
the computer, git or an agent runs or signs in (PATH, GITHUB_TOKEN, ANTHROPIC_*, OPENAI_*,
ENSEMBLE_*, GIT_*, …) are refused.

Model-provider keys (Anthropic, OpenAI) are kept the same way with set-key; the assistant
uses a saved key before ANTHROPIC_API_KEY or OPENAI_API_KEY. Ollama on this computer needs
no key and is found by itself.

A value is read from standard input, never from the command line (where other programs
and your shell's history could see it): typed without echo at a terminal, or piped in.

A browser can seal a value for this computer alone with its seal key; compare the key's
fingerprint on the page with 'ensemble secrets fingerprint'.`,
		RunE: groupRun,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newSecretsListCmd(g), newSecretsSetCmd(g), newSecretsRemoveCmd(g), newSecretsFingerprintCmd(g),
		newSecretsSetKeyCmd(g), newSecretsRecipientCmd(g), newSecretsExportCmd(g), newSecretsImportCmd(g),
		newSecretsAllowCmd(g), newSecretsModeCmd(g), newSecretsPassphraseCmd(g))
	return cmd
}

func newSecretsListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List secrets by name, with where each may be sent (never the values)",
		Args:  usageArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var out struct {
				Secrets []secrets.Secret `json:"secrets"`
			}
			if err := c.do(cmd.Context(), http.MethodGet, "/api/secrets", nil, &out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if len(out.Secrets) == 0 {
				fmt.Fprintln(w, "No secrets. Keep one with `ensemble secrets set NAME`.")
				return nil
			}
			var rs secrets.RunSettings
			if err := c.do(cmd.Context(), http.MethodGet, "/api/settings/secrets", nil, &rs); err != nil {
				return err
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tMAY BE SENT TO\tUSED\tUPDATED")
			for _, s := range out.Secrets {
				allow := strings.Join(s.Allow, ", ")
				switch {
				case s.Kind == secrets.Provider:
					allow = "Ensemble's own model calls"
				case allow == "":
					allow = "(nowhere)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Kind, allow, usedWhere(s), s.UpdatedAt.Local().Format("2006-01-02 15:04"))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(w, "\n"+modeLine(rs))
			return nil
		},
	}
}

func newSecretsSetCmd(g *globals) *cobra.Command {
	var allow []string
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Keep a secret; its value is read from standard input",
		Long: `Keep a secret under NAME, replacing one of that name. The value is read from standard
input: at a terminal it is typed without echo; otherwise everything piped in, without its
final line end (so a multi-line value such as a PEM key is kept whole).`,
		Example: `  ensemble secrets set STRIPE_API_KEY --allow https://api.stripe.com
  pass show stripe | ensemble secrets set STRIPE_API_KEY --allow https://api.stripe.com`,
		Args: usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if p := secrets.NameProblem(secrets.Run, name); p != "" {
				return errors.New(p)
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			value, err := readSecret(cmd, "Value for "+name)
			if err != nil {
				return err
			}
			if allow == nil {
				allow = []string{}
			}
			if err := c.do(cmd.Context(), http.MethodPut, "/api/secrets/"+url.PathEscape(name), map[string]any{"value": value, "allow": allow}, nil); err != nil {
				return err
			}
			where := "it may be sent nowhere (runs that may have it get it as $" + name + ")"
			if len(allow) > 0 {
				where = "it may be sent only to " + strings.Join(allow, ", ")
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Kept %s, encrypted on this computer; %s.\n", name, where)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&allow, "allow", nil, "an origin the secret may be sent to (https://host); repeat for more")
	return cmd
}

func newSecretsSetKeyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "set-key anthropic|openai",
		Short: "Keep a model provider's API key for the assistant; read from standard input",
		Long: `Keep Anthropic's or OpenAI's API key, encrypted on this computer. The assistant uses it
before ANTHROPIC_API_KEY or OPENAI_API_KEY. Remove it with
'ensemble secrets remove provider:anthropic' (or provider:openai).`,
		Example:   `  ensemble secrets set-key anthropic`,
		Args:      usageArgs(1),
		ValidArgs: []string{"anthropic", "openai"},
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if id != "anthropic" && id != "openai" {
				return fmt.Errorf("set-key takes anthropic or openai, not %q (Ollama needs no key).", id)
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			key, err := readSecret(cmd, "API key for "+id)
			if err != nil {
				return err
			}
			if err := c.do(cmd.Context(), http.MethodPut, "/api/settings/providers/"+id+"/key", map[string]any{"key": key}, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Kept the %s key, encrypted on this computer; the assistant uses it from now on.\n", id)
			return nil
		},
	}
}

func newSecretsRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Forget a secret (provider:anthropic or provider:openai for a provider key)",
		Args:  usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			if err := c.do(cmd.Context(), http.MethodDelete, "/api/secrets/"+url.PathEscape(args[0]), nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed %s from this computer.\n", args[0])
			return nil
		},
	}
}

func newSecretsFingerprintCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "fingerprint",
		Short: "Show this computer's seal key fingerprint, to compare with the one a page shows",
		Args:  usageArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			pk, err := sealPublic(cmd, g)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n\nThis computer's seal key (%s, id %s). A page sealing a secret for this computer\nmust show the same fingerprint.\n", pk.Fingerprint, pk.Alg, pk.Kid)
			return nil
		},
	}
}

// sealPublic asks the running runtime for its seal key or, when none runs, reads the public half
// from seal-key.json, which holds it in the clear.
func sealPublic(cmd *cobra.Command, g *globals) (secrets.SealPublic, error) {
	var pk secrets.SealPublic
	if c, err := connect(cmd.Context(), g); err == nil {
		return pk, c.do(cmd.Context(), http.MethodGet, "/api/secrets/seal-key", nil, &pk)
	}
	dir, err := dataDir(g.data)
	if err != nil {
		return pk, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, secrets.SealKeyFile))
	if errors.Is(err, os.ErrNotExist) {
		return pk, fmt.Errorf("This computer has no seal key yet; start Ensemble with `ensemble serve` to make one.")
	}
	if err != nil {
		return pk, err
	}
	var f struct {
		SPKI string `json:"spki"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return pk, fmt.Errorf("%s is not one Ensemble wrote: %w", secrets.SealKeyFile, err)
	}
	der, err := base64.RawURLEncoding.DecodeString(f.SPKI)
	if err != nil {
		return pk, fmt.Errorf("%s is not one Ensemble wrote: %w", secrets.SealKeyFile, err)
	}
	kid, fp := secrets.KeyID(der)
	return secrets.SealPublic{Kid: kid, Alg: secrets.SealAlg, SPKI: f.SPKI, Fingerprint: fp}, nil
}

// readSecret reads a value from the command's input: without echo at a terminal (the prompt goes
// to standard error), else all that is piped in, without the line end that closes it.
func readSecret(cmd *cobra.Command, prompt string) (string, error) {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && term.IsTerminal(f.Fd()) {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s (not shown): ", prompt)
		b, err := term.ReadPassword(f.Fd())
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("read the value: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	b, err := io.ReadAll(io.LimitReader(bufio.NewReader(in), secrets.MaxValue+2))
	if err != nil {
		return "", fmt.Errorf("read the value: %w", err)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", errors.New("No value came in on standard input; type it at a terminal, or pipe it in.")
	}
	return v, nil
}
