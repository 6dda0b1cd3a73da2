package app

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/bridge/keys"
)

func newKeysCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Make, list and revoke the ens_ keys editors and agents use",
		Long: `Make, list and revoke the ens_ keys that editors and coding agents use to reach Ensemble
through the context bridge (ensemble mcp). A key reads; --changes also lets it make changes.
A key is shown once, when it is made; Ensemble keeps only its hash.`,
	}
	cmd.AddCommand(newKeysCreateCmd(g), newKeysListCmd(g), newKeysRevokeCmd(g), newKeysWhoamiCmd(g))
	return cmd
}

func newKeysCreateCmd(g *globals) *cobra.Command {
	var changes, apps bool
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Make a key and show it once",
		Example: `  ensemble keys create "laptop editor"
  ensemble keys create "claude code" --changes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var out struct {
				Key    keys.Key `json:"key"`
				Secret string   `json:"secret"`
			}
			if err := c.do(cmd.Context(), http.MethodPost, "/api/keys", map[string]any{"name": args[0], "canWrite": changes, "canUseApps": apps}, &out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Made key “%s” (%s): %s.\n\n  %s\n\n", out.Key.Name, out.Key.ID, grantText(out.Key), out.Secret)
			fmt.Fprintln(w, "This is the only time it is shown. Put it in the environment your editor starts from,")
			fmt.Fprintln(w, "for example in your shell profile, never in a file you commit:")
			fmt.Fprintf(w, "\n  export ENSEMBLE_KEY=%s\n\nThen run `ensemble mcp setup <client>`.\n", out.Secret)
			return nil
		},
	}
	cmd.Flags().BoolVar(&changes, "changes", false, "let editors and agents make changes (tasks, pages, projects, people, repositories, files)")
	cmd.Flags().BoolVar(&apps, "apps", false, "let editors and agents use connected apps (a hosted Ensemble feature; nothing here)")
	return cmd
}

func grantText(k keys.Key) string {
	s := "reads"
	if k.CanWrite {
		s = "reads and makes changes"
	}
	if k.CanUseApps {
		s += ", uses connected apps"
	}
	return s
}

func newKeysListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List keys with their grants",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var out struct {
				Keys []keys.Key `json:"keys"`
			}
			if err := c.do(cmd.Context(), http.MethodGet, "/api/keys", nil, &out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if len(out.Keys) == 0 {
				fmt.Fprintln(w, "No keys. Make one with `ensemble keys create NAME`.")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tENDS\tGRANTS\tCREATED\tLAST USED\tSTATE")
			for _, k := range out.Keys {
				used, state := "never", "active"
				if k.LastUsedAt != nil {
					used = k.LastUsedAt.Local().Format("2006-01-02 15:04")
				}
				if k.RevokedAt != nil {
					state = "revoked " + k.RevokedAt.Local().Format("2006-01-02")
				}
				fmt.Fprintf(tw, "%s\t%s\t…%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Hint, grantText(k), k.CreatedAt.Local().Format("2006-01-02"), used, state)
			}
			return tw.Flush()
		},
	}
}

func newKeysRevokeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a key at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var out struct {
				Key keys.Key `json:"key"`
			}
			if err := c.do(cmd.Context(), http.MethodDelete, "/api/keys/"+args[0], nil, &out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Revoked key “%s” (%s); editors using it are refused from now on.\n", out.Key.Name, out.Key.ID)
			return nil
		},
	}
}

func newKeysWhoamiCmd(g *globals) *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Say which key ENSEMBLE_KEY is and what it may do",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			if key == "" {
				key = os.Getenv("ENSEMBLE_KEY")
			}
			who, err := bridgeWhoami(cmd.Context(), dir, key)
			if err != nil {
				return err
			}
			grants := "reads"
			if who.CanWrite {
				grants = "reads and makes changes"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Key “%s” (%s) %s in “%s”.\n", who.KeyName, who.KeyID, grants, who.SpaceName)
			return nil
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the key (default $ENSEMBLE_KEY)")
	return cmd
}

type whoami struct {
	KeyName   string `json:"keyName"`
	KeyID     string `json:"keyId"`
	CanWrite  bool   `json:"canWrite"`
	SpaceName string `json:"spaceName"`
}

// bridgeWhoami asks the runtime about a key, as the bridge does.
func bridgeWhoami(ctx context.Context, dir, key string) (whoami, error) {
	var w whoami
	f, err := readAPIFile(dir)
	if err != nil {
		return w, fmt.Errorf("Ensemble is not running for %s; start it with `ensemble serve`", dir)
	}
	c := &client{f: f, http: httpClient()}
	c.f.Token = key // the key, never the launch token
	if key == "" {
		return w, fmt.Errorf("ENSEMBLE_KEY is not set; make a key with `ensemble keys create NAME`")
	}
	err = c.do(ctx, http.MethodGet, "/api/bridge/whoami", nil, &w)
	return w, err
}
