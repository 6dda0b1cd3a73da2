package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/bridge"
)

// bridgeKey is the key from the flag or the environment. ENSEMBLE_BRIDGE_TOKEN is the name the
// hosted bridge's guides use.
func bridgeKey(flag string) string {
	if flag != "" {
		return flag
	}
	if k := os.Getenv("ENSEMBLE_KEY"); k != "" {
		return k
	}
	return os.Getenv("ENSEMBLE_BRIDGE_TOKEN")
}

func newMCPCmd(g *globals) *cobra.Command {
	var useHTTP bool
	var key string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the context bridge (MCP) to editors and agents",
		Long: `Serve Ensemble's context bridge, the MCP server editors and coding agents use to read
your tasks, projects, people, repositories, pages and files, and (with a key that allows
changes) to create and update them.

Editors launch 'ensemble mcp' themselves and speak MCP over its stdin and stdout. With --http it
serves Streamable HTTP at http://127.0.0.1:4010/mcp instead (CONTEXT_BRIDGE_PORT changes the
port; CONTEXT_BRIDGE_HOST must be 127.0.0.1, localhost or ::1). Any program on this computer can
reach that port, so --http refuses to start without a token: set CONTEXT_BRIDGE_HTTP_TOKEN to a
random secret of at least 16 characters, and every request must carry it as
Authorization: Bearer <token>; nothing reads or writes through the HTTP bridge without it.

The bridge uses the ens_ key in ENSEMBLE_KEY (make one with 'ensemble keys create NAME') and
finds the running runtime through api.json in the data folder.`,
		Example: `  ensemble mcp
  ENSEMBLE_KEY=ens_… CONTEXT_BRIDGE_HTTP_TOKEN=$(openssl rand -hex 32) ensemble mcp --http
  ensemble mcp setup claude`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(g.data)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cwd, _ := os.Getwd()
			cfg := bridge.Config{DataDir: dir, Key: bridgeKey(key), Dir: cwd, Local: true, Version: Version, Log: g.log}
			if !useHTTP {
				srv := bridge.New(ctx, cfg).Server()
				err := srv.Run(ctx, &mcp.StdioTransport{})
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			host := os.Getenv("CONTEXT_BRIDGE_HOST")
			if host == "" {
				host = "127.0.0.1"
			}
			if err := bridge.CheckHost(host); err != nil {
				return err
			}
			port := os.Getenv("CONTEXT_BRIDGE_PORT")
			if port == "" {
				port = "4010"
			}
			token := os.Getenv("CONTEXT_BRIDGE_HTTP_TOKEN")
			if err := bridge.CheckHTTPToken(token); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
			if err != nil {
				return fmt.Errorf("the context bridge cannot listen on %s: %w", net.JoinHostPort(host, port), err)
			}
			b := bridge.New(ctx, cfg)
			hs := &http.Server{Handler: bridge.HTTPHandler(b.Server(), token), ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(cmd.ErrOrStderr(), "Ensemble context bridge at http://%s/mcp\n", ln.Addr())
			go func() {
				<-ctx.Done()
				sctx, cancel := contextWithTimeout(5 * time.Second)
				defer cancel()
				hs.Shutdown(sctx)
			}()
			if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&useHTTP, "http", false, "serve Streamable HTTP on 127.0.0.1:4010/mcp instead of stdio; needs CONTEXT_BRIDGE_HTTP_TOKEN")
	cmd.Flags().StringVar(&key, "key", "", "the ens_ key (default $ENSEMBLE_KEY); prefer the environment, which other users cannot read")
	cmd.AddCommand(newMCPSetupCmd(g))
	return cmd
}

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
}

var setupClients = map[string]setupClient{
	"claude": {name: "Claude Code", project: ".mcp.json", root: "mcpServers",
		entry: func(bin string, args []string) any {
			return map[string]any{"type": "stdio", "command": bin, "args": args, "env": map[string]string{"ENSEMBLE_KEY": "${ENSEMBLE_KEY}"}}
		},
		note: "Claude Code expands ${ENSEMBLE_KEY} from its environment when it starts the server."},
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
		}},
	"copilot": {name: "GitHub Copilot CLI", user: "~/.copilot/mcp-config.json", root: "mcpServers",
		entry: func(bin string, args []string) any {
			return map[string]any{"type": "local", "command": bin, "args": args, "env": map[string]string{"ENSEMBLE_KEY": "${ENSEMBLE_KEY}"}, "tools": []string{"*"}}
		},
		note: "/mcp in a Copilot CLI session lists the server."},
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
		note: "Codex forwards ENSEMBLE_KEY from its environment to the server (env_vars)."},
}

func setupNames() string {
	var n []string
	for k := range setupClients {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

func newMCPSetupCmd(g *globals) *cobra.Command {
	var print, user bool
	cmd := &cobra.Command{
		Use:   "setup CLIENT",
		Short: "Configure an editor or agent to use the context bridge",
		Long: `Write the configuration CLIENT reads to start the context bridge, in its own format:
claude (.mcp.json), codex (~/.codex/config.toml), copilot (~/.copilot/mcp-config.json),
cursor (.cursor/mcp.json), gemini (.gemini/settings.json), vscode (.vscode/mcp.json),
windsurf (~/.codeium/windsurf/mcp_config.json) and zed (.zed/settings.json). --user writes
the home folder's file where the client has one; --print prints instead of writing.

The key is never written: each file takes ENSEMBLE_KEY from the environment, so a project
file can be committed. Put the key in your shell profile (export ENSEMBLE_KEY=ens_…).`,
		Example: `  ensemble mcp setup claude
  ensemble mcp setup codex --print`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ok := setupClients[args[0]]
			if !ok {
				return fmt.Errorf("%q is not a client setup knows; use one of %s", args[0], setupNames())
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
			path := c.project
			if (user && c.user != "") || path == "" {
				path = c.user
			}
			if user && c.user == "" {
				return fmt.Errorf("%s has no configuration file in the home folder; leave out --user to write %s", c.name, c.project)
			}
			home, _ := os.UserHomeDir()
			if rest, ok := strings.CutPrefix(path, "~/"); ok {
				path = filepath.Join(home, rest)
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
					snippet, _ := json.MarshalIndent(map[string]any{c.root: map[string]any{"ensemble": c.entry(bin, margs)}}, "", "  ")
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
			return nil
		},
	}
	cmd.Flags().BoolVar(&print, "print", false, "print the configuration instead of writing it")
	cmd.Flags().BoolVar(&user, "user", false, "write the client's file in the home folder instead of the project's")
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
	servers["ensemble"] = entry
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
	table := fmt.Sprintf("[mcp_servers.ensemble]\ncommand = %s\nargs = [%s]\nenv_vars = [\"ENSEMBLE_KEY\"]\n", q(bin), strings.Join(qs, ", "))
	var out []string
	skip := false
	for _, line := range strings.Split(cur, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			skip = t == "[mcp_servers.ensemble]" || strings.HasPrefix(t, "[mcp_servers.ensemble.")
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

func contextWithTimeout(d time.Duration) (ctx context.Context, cancel context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
