package app

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMCPSetup(t *testing.T) {
	for client, want := range map[string]string{
		"claude":   `"ENSEMBLE_KEY": "${ENSEMBLE_KEY}"`,
		"cursor":   `"ENSEMBLE_KEY": "${env:ENSEMBLE_KEY}"`,
		"vscode":   `"servers"`,
		"gemini":   `"ENSEMBLE_KEY": "$ENSEMBLE_KEY"`,
		"copilot":  `"type": "local"`,
		"windsurf": `"ENSEMBLE_KEY": "${env:ENSEMBLE_KEY}"`,
		"zed":      `"context_servers"`,
		"codex":    `env_vars = ["ENSEMBLE_KEY"]`,
		"opencode": `"ENSEMBLE_KEY": "{env:ENSEMBLE_KEY}"`,
	} {
		t.Run(client, func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			t.Setenv("CODEX_HOME", "")
			t.Setenv("ENSEMBLE_KEY", "ens_secretsecretsecretsecretsecret")
			code, out := ensemble(t, "mcp", "setup", client, "--print")
			if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, `mcp`) || strings.Contains(out, "ens_secret") {
				t.Errorf("setup %s --print: %d\n%s", client, code, out)
			}
		})
	}
	// Writing keeps what the file already holds, and never the key.
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("ENSEMBLE_KEY", "ens_secretsecretsecretsecretsecret")
	os.WriteFile(".mcp.json", []byte(`{"mcpServers":{"other":{"command":"x"}}}`), 0o644)
	t.Setenv("CODEX_HOME", "")
	code, out := ensemble(t, "mcp", "setup", "claude")
	if code != 0 || !strings.Contains(out, "Configured Claude Code") || !strings.Contains(out, "Still to do: Claude Code starts a project's .mcp.json servers only once you approve them") {
		t.Fatalf("setup claude: %d %q", code, out)
	}
	b, _ := os.ReadFile(".mcp.json")
	var doc struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.MCPServers["other"].Command != "x" || doc.MCPServers["ensemble"].Args[0] != "mcp" || bytes.Contains(b, []byte("ens_secret")) {
		t.Errorf(".mcp.json = %s (%v)", b, err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"o3\"\n\n[mcp_servers.ensemble]\ncommand = \"old\"\n\n[mcp_servers.other]\ncommand = \"y\"\n"), 0o644)
	if code, out := ensemble(t, "mcp", "setup", "codex"); code != 0 {
		t.Fatalf("setup codex: %d %q", code, out)
	}
	b, _ = os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if s := string(b); strings.Contains(s, `"old"`) || !strings.Contains(s, "[mcp_servers.other]") || !strings.Contains(s, `model = "o3"`) || strings.Count(s, "[mcp_servers.ensemble]") != 1 {
		t.Errorf("config.toml = %s", s)
	}
	// Codex's file is where Codex reads it: $CODEX_HOME when that is set.
	codexHome := t.TempDir()
	t.Setenv("CODEX_HOME", codexHome)
	if code, out := ensemble(t, "mcp", "setup", "codex"); code != 0 || !strings.Contains(out, filepath.Join(codexHome, "config.toml")) {
		t.Fatalf("setup codex with CODEX_HOME: %d %q", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(codexHome, "config.toml")); err != nil || !strings.Contains(string(b), "[mcp_servers.ensemble]") {
		t.Errorf("$CODEX_HOME/config.toml = %s (%v)", b, err)
	}
	// Each client's one step left: Gemini CLI's trust of the folder, with the project's file or the home folder's.
	for _, user := range []bool{false, true} {
		args := []string{"mcp", "setup", "gemini"}
		if user {
			args = append(args, "--user")
		}
		if code, out := ensemble(t, args...); code != 0 || !strings.Contains(out, "Still to do: Gemini CLI starts MCP servers") || !strings.Contains(out, "trust") {
			t.Errorf("setup gemini (user %v): %d %q", user, code, out)
		}
	}
	// --check of a client with no list command reads the file.
	if code, out := ensemble(t, "mcp", "setup", "--check", "cursor"); code != 1 || !strings.Contains(out, "has no ensemble entry: run `ensemble mcp setup cursor`") {
		t.Errorf("check cursor: %d %q", code, out)
	}
	if code, out := ensemble(t, "mcp", "setup", "notepad"); code != 1 || !strings.Contains(out, "not a client setup knows") {
		t.Errorf("unknown client: %d %q", code, out)
	}
}

func TestMCPHTTPRefusesOtherHosts(t *testing.T) {
	for _, host := range []string{"0.0.0.0", "192.168.1.10", "example.com"} {
		t.Setenv("CONTEXT_BRIDGE_HOST", host)
		code, out := ensemble(t, "--data", t.TempDir(), "mcp", "--http")
		if code != 1 || !strings.Contains(out, "listens only on 127.0.0.1, localhost or ::1") {
			t.Errorf("host %s: %d %q", host, code, out)
		}
	}
}

// TestMCPHTTPNeedsAToken: any program on the computer can reach the HTTP bridge's port, so it does
// not start without a token, nor with a short one, and says what to set.
func TestMCPHTTPNeedsAToken(t *testing.T) {
	for token, want := range map[string]string{"": "needs a token", "short": "use a random secret of at least 16"} {
		t.Setenv("CONTEXT_BRIDGE_HTTP_TOKEN", token)
		code, out := ensemble(t, "--data", t.TempDir(), "mcp", "--http")
		if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "CONTEXT_BRIDGE_HTTP_TOKEN") {
			t.Errorf("token %q: %d %q", token, code, out)
		}
	}
	if code, out := ensemble(t, "mcp", "--help"); code != 0 || !strings.Contains(out, "refuses to start without a token") {
		t.Errorf("--help does not say --http needs a token: %q", out)
	}
}

// mcpSDKVersion is the official TypeScript MCP SDK the end-to-end test drives the bridge with.
const mcpSDKVersion = "1.32.2"

// installMCPSDK installs the TypeScript SDK once into the test cache and returns its folder.
func installMCPSDK(t *testing.T) string {
	t.Helper()
	_, nodeErr := exec.LookPath("node")
	_, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node and npm are needed for the MCP end-to-end test and CI=true")
		}
		t.Skip("node or npm is not installed: skipping the end-to-end test with the TypeScript MCP SDK")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "ensemble-test", "npm", "mcp-sdk@"+mcpSDKVersion)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return dir
	}
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"ensemble-mcp-e2e","private":true,"type":"module"}`), 0o644)
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--silent", "@modelcontextprotocol/sdk@"+mcpSDKVersion)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install @modelcontextprotocol/sdk@%s: %v\n%s", mcpSDKVersion, err, out)
	}
	return dir
}

const e2eScript = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, data, key, token] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target, args: ["--data", data, "mcp"], env: { ...process.env, ENSEMBLE_KEY: key } })
  : new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers: { Authorization: "Bearer " + token } } });
const client = new Client({ name: "e2e", version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => ({ name: t.name, readOnly: t.annotations?.readOnlyHint }));
const brief = await client.callTool({ name: "ensemble_brief", arguments: { task: "Fix the login retry" } });
const search = await client.callTool({ name: "ensemble_search", arguments: { query: "login retry" } });
const created = await client.callTool({ name: "ensemble_create_task", arguments: { title: "From " + mode, status: "todo" } });
const resource = await client.readResource({ uri: "ensemble://tasks" });
console.log(JSON.stringify({ tools, brief: brief.structuredContent, search: search.structuredContent,
  created: created.structuredContent, createdError: created.isError ? created.content : null, resource: JSON.parse(resource.contents[0].text) }));
await client.close();
`

func TestMCPEndToEndTypeScriptSDK(t *testing.T) {
	sdk := installMCPSDK(t)
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	s := startServe(t, data)
	c := &client{f: s.f, http: httpClient()}
	ctx := context.Background()
	var made struct {
		Secret string `json:"secret"`
	}
	if err := c.do(ctx, "POST", "/api/keys", map[string]any{"name": "e2e", "canWrite": true}, &made); err != nil {
		t.Fatal(err)
	}
	var task struct{ ID string }
	if err := c.do(ctx, "POST", "/api/tasks", map[string]any{"title": "Fix the login retry", "page": "Retry gives up."}, &task); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(sdk, fmt.Sprintf("e2e-%d.mjs", time.Now().UnixNano()))
	os.WriteFile(script, []byte(e2eScript), 0o644)
	t.Cleanup(func() { os.Remove(script) })

	// Streamable HTTP: `ensemble mcp --http` with a token, on a free loopback port.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	httpBridge := exec.Command(bin, "--data", data, "mcp", "--http")
	httpBridge.Env = append(os.Environ(), "ENSEMBLE_KEY="+made.Secret, fmt.Sprintf("CONTEXT_BRIDGE_PORT=%d", port), "CONTEXT_BRIDGE_HTTP_TOKEN=tok-e2e-5f0c2a9d71b3")
	var herr bytes.Buffer
	httpBridge.Stderr = &herr
	if err := httpBridge.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { httpBridge.Process.Kill(); httpBridge.Wait() })
	for i := 0; i < 100; i++ {
		if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			conn.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			target := bin
			if mode == "http" {
				target = fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
			}
			cmd := exec.Command("node", script, mode, target, data, made.Secret, "tok-e2e-5f0c2a9d71b3")
			cmd.Dir = sdk
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s\n%s\nbridge: %s", err, stderr.String(), out, herr.String())
			}
			var got struct {
				Tools []struct {
					Name     string
					ReadOnly bool
				}
				Brief        map[string]any
				Search       map[string]any
				Created      map[string]any
				CreatedError any
				Resource     map[string]any
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			names := map[string]bool{}
			for _, tl := range got.Tools {
				names[tl.Name] = true
				if tl.Name == "ensemble_brief" && !tl.ReadOnly {
					t.Error("ensemble_brief is not read-only")
				}
			}
			for _, n := range []string{"ensemble_brief", "ensemble_search", "ensemble_create_task", "ensemble_get_file", "ensemble_act"} {
				if !names[n] {
					t.Errorf("tools lack %s: %v", n, got.Tools)
				}
			}
			if got.Brief["contextRef"] != "ensemble://task/"+task.ID {
				t.Errorf("brief = %v", got.Brief)
			}
			if hits, _ := got.Search["hits"].([]any); len(hits) == 0 || hits[0].(map[string]any)["id"] != task.ID {
				t.Errorf("search = %v", got.Search)
			}
			if got.CreatedError != nil {
				t.Fatalf("create: %v", got.CreatedError)
			}
			id := got.Created["task"].(map[string]any)["id"].(string)
			// Compare with the database: the task is there, made by the key.
			var title, actor string
			db := openDB(t, data)
			db.QueryRow("SELECT title FROM tasks WHERE id = ?", id).Scan(&title)
			db.QueryRow(`SELECT g.actor_name FROM ledger_groups g JOIN ledger_changes c ON c.group_id = g.id WHERE c.row_id = ?`, id).Scan(&actor)
			if title != "From "+mode || actor != "e2e" {
				t.Errorf("database: title %q actor %q", title, actor)
			}
			var open int
			db.QueryRow("SELECT count(*) FROM tasks WHERE status NOT IN ('done','dropped') AND deleted_at IS NULL").Scan(&open)
			if total, _ := got.Resource["total"].(float64); int(total) != open {
				t.Errorf("ensemble://tasks total %v, database %d", got.Resource["total"], open)
			}
		})
	}
}

// openDB opens the data folder's database read-only, beside the running runtime.
func openDB(t *testing.T, data string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dbPath(data)+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
