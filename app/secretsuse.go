package app

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

// usedWhere says how runs use a secret, for `ensemble secrets list`.
func usedWhere(s secrets.Secret) string {
	if s.Kind == secrets.Provider {
		return "the assistant"
	}
	var parts []string
	if s.Env {
		parts = append(parts, "runs' environment ($"+s.Name+")")
	}
	if s.Git && len(s.Allow) > 0 {
		user := s.GitUser
		if user == "" {
			user = secrets.DefaultGitUser
		}
		parts = append(parts, "git to "+strings.Join(s.Allow, ", ")+" (as "+user+")")
	}
	if len(s.Allow) > 0 {
		parts = append(parts, "secret_http")
	}
	if len(parts) == 0 {
		return "(no run: ensemble secrets allow " + s.Name + " --env on)"
	}
	return strings.Join(parts, "; ")
}

// modeLine says which secrets a run that names none gets.
func modeLine(rs secrets.RunSettings) string {
	switch {
	case rs.Mode == secrets.ModeNamed && len(rs.Names) > 0:
		return "Mode named: a run that names no secrets gets " + strings.Join(rs.Names, ", ") + " (ensemble secrets mode)."
	case rs.Mode == secrets.ModeNamed:
		return "Mode named: a run that names no secrets gets none (ensemble secrets mode)."
	}
	return "Mode all: a run that names no secrets gets every secret used in runs' environment, and no git sign-in (ensemble secrets mode)."
}

// onOff reads an on|off flag; nil when it was not given.
func onOff(cmd *cobra.Command, name, v string) (*bool, error) {
	if !cmd.Flags().Changed(name) {
		return nil, nil
	}
	switch v {
	case "on":
		b := true
		return &b, nil
	case "off":
		b := false
		return &b, nil
	}
	return nil, fmt.Errorf("--%s takes on or off, not %q.", name, v)
}

func newSecretsAllowCmd(g *globals) *cobra.Command {
	var none bool
	var env, git, gitUser string
	cmd := &cobra.Command{
		Use:   "allow NAME [ORIGIN…] [--none] [--env on|off] [--git on|off] [--git-user USER]",
		Short: "Say where a secret may be sent and how runs use it; its value stays as it is",
		Long: `Say where a run secret may be sent and how runs use it, without typing its value again.

ORIGIN… replaces the origins it may be sent to (https://api.stripe.com); --none clears them.
A secret with origins is used by reference: secret_http puts it in a request to them, and no
model ever sees it.

--env on puts it in the environment of the runs that may have it, as $NAME, where any program
the agent runs can read it and send it anywhere; a secret with no origins is used this way.

--git on makes git over https to its origins sign in with it, in the runs that name it (their
run profile, or 'ensemble secrets mode named NAME'), through Ensemble's credential helper while
the run goes on. It is on by itself for github.com, gitlab.com, bitbucket.org and codeberg.org.
--git-user is the user name git is given with it (x-access-token when empty, as GitHub takes).`,
		Example: `  ensemble secrets allow STRIPE_API_KEY https://api.stripe.com
  ensemble secrets allow GH_PAT https://github.com --git on
  ensemble secrets allow GITEA_TOKEN https://git.example.com --git on --git-user me
  ensemble secrets allow OLD_TOKEN --none --env on`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("Name the secret: ensemble secrets allow NAME [ORIGIN…].")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name, origins := args[0], args[1:]
			var ch secrets.UseChange
			switch {
			case none && len(origins) > 0:
				return errors.New("Give origins or --none, not both.")
			case none:
				ch.Allow = &[]string{}
			case len(origins) > 0:
				ch.Allow = &origins
			}
			var err error
			if ch.Env, err = onOff(cmd, "env", env); err != nil {
				return err
			}
			if ch.Git, err = onOff(cmd, "git", git); err != nil {
				return err
			}
			if cmd.Flags().Changed("git-user") {
				ch.GitUser = &gitUser
			}
			if ch.Allow == nil && ch.Env == nil && ch.Git == nil && ch.GitUser == nil {
				return errors.New("Say what to change: origins, --none, --env, --git or --git-user.")
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var sc secrets.Secret
			if err := c.do(cmd.Context(), http.MethodPatch, "/api/secrets/"+url.PathEscape(name), ch, &sc); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is used: %s.\n", sc.Name, usedWhere(sc))
			return nil
		},
	}
	cmd.Flags().BoolVar(&none, "none", false, "it may be sent nowhere")
	cmd.Flags().StringVar(&env, "env", "", "on: runs that may have it get it as $NAME; off: they do not")
	cmd.Flags().StringVar(&git, "git", "", "on: git over https to its origins signs in with it; off: it does not")
	cmd.Flags().StringVar(&gitUser, "git-user", "", "the user name git is given with it")
	return cmd
}

func newSecretsModeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "mode [all | named [NAME…]]",
		Short: "Choose which secrets a run that names none gets (without arguments: show it)",
		Long: `Choose which secrets a run gets when neither its run profile nor its assignment names any.

all (the default, for compatibility) gives it every secret used in runs' environment, and no
git sign-in. named gives it only the NAMEs listed here, possibly none: their environment use and
their git sign-in both. A run that names its own secrets gets only those, whatever the mode.`,
		Example: `  ensemble secrets mode
  ensemble secrets mode named
  ensemble secrets mode named STRIPE_API_KEY GH_PAT
  ensemble secrets mode all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var rs secrets.RunSettings
			if len(args) == 0 {
				if err := c.do(cmd.Context(), http.MethodGet, "/api/settings/secrets", nil, &rs); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), modeLine(rs))
				return nil
			}
			in := secrets.RunSettings{Mode: secrets.Mode(args[0]), Names: args[1:]}
			if in.Names == nil {
				in.Names = []string{}
			}
			if err := c.do(cmd.Context(), http.MethodPut, "/api/settings/secrets", in, &rs); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), modeLine(rs))
			return nil
		},
	}
}
