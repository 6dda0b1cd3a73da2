package app

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

func newCaptureCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "capture",
		Short: "What nodes and runs may capture of the sites you browse",
	}
	cmd.AddCommand(newCaptureSitesCmd(g))
	return cmd
}

// captureLists are the site lists by their rule, with their API routes and their words.
var captureLists = []struct{ rule, path, title string }{
	{"preview", "/api/node/preview-sites", "Captures you see first (held on a card, shown to no model):"},
	{"never", "/api/node/never-sites", "Never captured (no screenshot, no live picture of a run's tab):"},
}

func newCaptureSitesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "sites [preview|never|remove SITE...]",
		Short: "List or change the sites whose captures you see first, and those never captured",
		Long: `A node's or a run's screenshot of a site you see first waits for you on a card (a run's,
above its trace) and no model sees it until you release it. A site never captured is not pictured at
all: its screenshots are dropped unseen and a run's live picture pauses on it. A site covers its
subdomains (bank.example.com covers login.bank.example.com); an address gives its host. A site
takes one rule: marking it never takes it out of the preview list, and the other way round.`,
		Example: `  ensemble capture sites
  ensemble capture sites preview bank.example.com mail.example.org
  ensemble capture sites never health.example
  ensemble capture sites remove mail.example.org`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return printCaptureSites(cmd.Context(), c, cmd.OutOrStdout())
			}
			action, sites := args[0], normalSites(args[1:])
			if len(sites) == 0 || action != "preview" && action != "never" && action != "remove" {
				return fmt.Errorf("Run it as `%s [preview|never|remove SITE...]`; `%[1]s --help` says more.", cmd.CommandPath())
			}
			for _, l := range captureLists {
				have, err := captureSites(cmd.Context(), c, l.path)
				if err != nil {
					return err
				}
				next := slices.DeleteFunc(slices.Clone(have), func(s string) bool { return slices.Contains(sites, s) })
				if l.rule == action {
					next = append(next, sites...)
				}
				if slices.Equal(next, have) {
					continue
				}
				if err := c.do(cmd.Context(), "PUT", l.path, map[string]any{"sites": next}, nil); err != nil {
					return err
				}
			}
			return printCaptureSites(cmd.Context(), c, cmd.OutOrStdout())
		},
	}
}

// normalSites are sites as the runtime keeps them: lower case, an address's host.
func normalSites(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		a = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(a)), ".")
		if u, err := url.Parse(a); err == nil && strings.Contains(a, "://") && u.Hostname() != "" {
			a = u.Hostname()
		}
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func captureSites(ctx context.Context, c *client, path string) ([]string, error) {
	var out struct {
		Sites []string `json:"sites"`
	}
	err := c.do(ctx, "GET", path, nil, &out)
	return out.Sites, err
}

func printCaptureSites(ctx context.Context, c *client, w io.Writer) error {
	for i, l := range captureLists {
		sites, err := captureSites(ctx, c, l.path)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, l.title)
		if len(sites) == 0 {
			fmt.Fprintln(w, "  (none)")
			continue
		}
		fmt.Fprintln(w, "  "+strings.Join(sites, "\n  "))
	}
	return nil
}
