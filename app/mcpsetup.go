package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// setupName is the name setup gives the person's own entry for the context bridge. A run's own
// MCP server goes by another (engines.OwnServer), so the two never meet in one agent's config.
const setupName = "ensemble"

// setupClient is how one editor or agent reads its MCP servers.
type setupClient struct {
	name    string
	project string // the file in the project, committed with it ("" if the client has none)
	user    string // the file in the home folder ("" if none)
	// entry is the server's configuration in the client's own format.
	entry func(bin string, args []string) any
	// root is the key the servers sit under.
	root string
	note string
	// step is the one thing the person still does before the client starts the server from the
	// project's file ("" when nothing is left); userStep the same for the home folder's file.
	step, userStep string
	// list is the client's own command that lists its servers (nil if it has none).
	list []string
}

var setupClients = map[string]setupClient{
	"claude": {name: "Claude Code", project: ".mcp.json", root: "mcpServers",
		entry: func(bin string, args []string) any {
			return map[string]any{"type": "stdio", "command": bin, "args": args, "env": map[string]string{"ENSEMBLE_KEY": "${ENSEMBLE_KEY}"}}
		},
		note: "Claude Code expands ${ENSEMBLE_KEY} from its environment when it starts the server.",
		step: "Claude Code starts a project's .mcp.json servers only once you approve them: run `claude` in this folder " +
			"and approve ensemble when it asks (until then `claude mcp list` shows it as Pending approval).",
		list: []string{"claude", "mcp", "list"}},
	"cursor": {name: "Cursor", project: ".cursor/mcp.json", user: "~/.cursor/mcp.json", root: "mcpServers",
		entry: func(bin string, args []string) any {
			return map[string]any{"type": "stdio", "command": bin, "args": args, "env": map[string]string{"ENSEMBLE_KEY": "${env:ENSEMBLE_KEY}"}}
		}},
	"vscode": {name: "VS Code", project: ".vscode/mcp.json", root: "servers",
		entry: func(bin string, args []string) any {
			return map[string]any{"type": "stdio", "command": bin, "args": args, "env": map[string]string{"ENSEMBLE_KEY": "${env:ENSEMBLE_KEY}"}}
		},
		note: "Reload VS Code, then enable the server in the Chat tools list."},
	"gemini": {name: "Gemini CLI", project: ".gemini/settings.json", user: "~/.gemini/settings.json", root: "mcpServers",
		entry: func(bin string, args []string) any {
			return map[string]any{"command": bin, "args": args, "env": map[string]string{"ENSEMBLE_KEY": "$ENSEMBLE_KEY"}}
		},
		step: "Gemini CLI starts MCP servers only in a folder you trust: run `gemini` in this folder and trust it " +
			"when it asks (/permissions changes it later); until then `gemini mcp list` shows ensemble as Disabled.",
		userStep: "Gemini CLI starts MCP servers, the home folder's too, only in folders you trust: run `gemini` in a " +
			"project's folder and trust it when it asks.",
		list: []string{"gemini", "mcp", "list"}},
	"copilot": {name: "GitHub Copilot CLI", user: "~/.copilot/mcp-config.json", root: "mcpServers",
		entry: func(bin string, args []string) any {
			return map[string]any{"type": "local", "command": bin, "args": args, "env": map[string]string{"ENSEMBLE_KEY": "${ENSEMBLE_KEY}"}, "tools": []string{"*"}}
		},
		note: "/mcp in a Copilot CLI session lists the server."},
	"opencode": {name: "OpenCode", project: "opencode.json", user: "~/.config/opencode/opencode.json", root: "mcp",
		entry: func(bin string, args []string) any {
			return map[string]any{"type": "local", "command": append([]string{bin}, args...), "environment": map[string]string{"ENSEMBLE_KEY": "{env:ENSEMBLE_KEY}"}, "enabled": true}
		},
		list: []string{"opencode", "mcp", "list"}},
	"windsurf": {name: "Windsurf", user: "~/.codeium/windsurf/mcp_config.json", root: "mcpServers",
		entry: func(bin string, args []string) any {
			return map[string]any{"command": bin, "args": args, "env": map[string]string{"ENSEMBLE_KEY": "${env:ENSEMBLE_KEY}"}}
		}},
	"zed": {name: "Zed", project: ".zed/settings.json", user: "~/.config/zed/settings.json", root: "context_servers",
		entry: func(bin string, args []string) any {
			return map[string]any{"source": "custom", "command": bin, "args": args, "env": map[string]string{}}
		},
		note: "Zed passes its own environment to the server, so start Zed from a shell where ENSEMBLE_KEY is set."},
	"codex": {name: "Codex CLI", user: "~/.codex/config.toml",
		note: "Codex forwards ENSEMBLE_KEY from its environment to the server (env_vars) and starts it in every session.",
		list: []string{"codex", "mcp", "list", "--json"}},
}

func setupNames() string {
	var n []string
	for k := range setupClients {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// setupPath is the file setup writes for client: the project's (relative to the working folder),
// or the home folder's with user or when the client has no project file. Codex's is in
// $CODEX_HOME when that is set, as Codex itself reads it.
func setupPath(client string, c setupClient, user bool) (path string, inHome bool, err error) {
	if user && c.user == "" {
		return "", false, fmt.Errorf("%s has no configuration file in the home folder; leave out --user to write %s", c.name, c.project)
	}
	path = c.project
	if user || path == "" {
		path, inHome = c.user, true
	}
	if client == "codex" {
		if ch := os.Getenv("CODEX_HOME"); ch != "" {
			return filepath.Join(ch, "config.toml"), true, nil
		}
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false, fmt.Errorf("find the home folder for %s: %w", path, err)
		}
		path = filepath.Join(home, rest)
	}
	return path, inHome, nil
}

func newMCPSetupCmd(g *globals) *cobra.Command {
	var print, user, check bool
	cmd := &cobra.Command{
		Use:   "setup CLIENT",
		Short: "Configure an editor or agent to use the context bridge",
		Long: `Write the configuration CLIENT reads to start the context bridge, in its own format:
claude (.mcp.json), codex ($CODEX_HOME/config.toml, else ~/.codex/config.toml), copilot
(~/.copilot/mcp-config.json), cursor (.cursor/mcp.json), gemini (.gemini/settings.json),
opencode (opencode.json), vscode (.vscode/mcp.json), windsurf (~/.codeium/windsurf/mcp_config.json)
and zed (.zed/settings.json). --user writes the home folder's file where the client has one;
--print prints instead of writing. The entry is named ensemble; Ensemble's own runs name their
server otherwise, so the two never collide.

The key is never written: each file takes ENSEMBLE_KEY from the environment, so a project
file can be committed. Put the key in your shell profile (export ENSEMBLE_KEY=ens_…).

--check asks the client itself (claude, codex, gemini and opencode have a command that lists
their servers) whether it has the ensemble server here, and says what is still missing.`,
		Example: `  ensemble mcp setup claude
  ensemble mcp setup codex --print
  ensemble mcp setup --check claude`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ok := setupClients[args[0]]
			if !ok {
				return fmt.Errorf("%q is not a client setup knows; use one of %s", args[0], setupNames())
			}
			path, inHome, err := setupPath(args[0], c, user)
			if err != nil {
				return err
			}
			if check {
				return checkSetup(cmd, args[0], c, path)
			}
			bin, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find the ensemble binary: %w", err)
			}
			if real, err := filepath.EvalSymlinks(bin); err == nil {
				bin = real
			}
			margs := []string{"mcp"}
			if g.data != "" || os.Getenv("ENSEMBLE_DATA") != "" {
				dir, err := dataDir(g.data)
				if err != nil {
					return err
				}
				margs = append(margs, "--data", dir)
			}
			var cur []byte
			if b, err := os.ReadFile(path); err == nil {
				cur = b
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			var next []byte
			if args[0] == "codex" {
				next = []byte(codexConfig(string(cur), bin, margs))
			} else {
				next, err = mergeJSON(cur, c.root, c.entry(bin, margs))
				if err != nil {
					snippet, _ := json.MarshalIndent(map[string]any{c.root: map[string]any{setupName: c.entry(bin, margs)}}, "", "  ")
					return fmt.Errorf("%s is not plain JSON (%v); add this to it by hand:\n%s", path, err, snippet)
				}
			}
			out := cmd.OutOrStdout()
			if print {
				fmt.Fprintf(out, "# %s: %s\n%s", c.name, path, next)
				return nil
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, next, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(out, "Configured %s in %s.\n", c.name, path)
			fmt.Fprintln(out, "The key is not in that file: the client takes ENSEMBLE_KEY from its environment. Put it in")
			fmt.Fprintln(out, "your shell profile (export ENSEMBLE_KEY=ens_…; make one with `ensemble keys create NAME`).")
			if c.note != "" {
				fmt.Fprintln(out, c.note)
			}
			step := c.step
			if inHome {
				step = c.userStep
			}
			if step != "" {
				fmt.Fprintln(out, "Still to do: "+step)
			}
			if c.list != nil {
				fmt.Fprintf(out, "`ensemble mcp setup --check %s` asks %s whether it has the server.\n", args[0], c.name)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&print, "print", false, "print the configuration instead of writing it")
	cmd.Flags().BoolVar(&user, "user", false, "write the client's file in the home folder instead of the project's")
	cmd.Flags().BoolVar(&check, "check", false, "ask the client whether it has the server, and say what is missing")
	return cmd
}

// mergeJSON sets root.ensemble to entry in a JSON object, keeping everything else.
func mergeJSON(cur []byte, root string, entry any) ([]byte, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(cur)) > 0 {
		if err := json.Unmarshal(cur, &doc); err != nil {
			return nil, err
		}
	}
	servers, _ := doc[root].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
	}
	servers[setupName] = entry
	doc[root] = servers
	b, err := json.MarshalIndent(doc, "", "  ")
	return append(b, '\n'), err
}

// codexConfig replaces (or adds) the [mcp_servers.ensemble] table of a Codex config.toml.
func codexConfig(cur, bin string, args []string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	qs := make([]string, len(args))
	for i, a := range args {
		qs[i] = q(a)
	}
	head := "[mcp_servers." + setupName + "]"
	table := fmt.Sprintf("%s\ncommand = %s\nargs = [%s]\nenv_vars = [\"ENSEMBLE_KEY\"]\n", head, q(bin), strings.Join(qs, ", "))
	var out []string
	skip := false
	for _, line := range strings.Split(cur, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			skip = t == head || strings.HasPrefix(t, strings.TrimSuffix(head, "]")+".")
		}
		if !skip {
			out = append(out, line)
		}
	}
	s := strings.TrimRight(strings.Join(out, "\n"), "\n")
	if s != "" {
		s += "\n\n"
	}
	return s + table
}
