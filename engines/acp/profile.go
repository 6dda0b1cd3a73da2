package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ensemblework/ensemble/engines"
)

// Profile is what differs between the ACP agents (spec 003 §3, §3.3).
type Profile struct {
	Name     string   // the driver's name: "opencode", "gemini", …
	Title    string   // the agent's name in sentences: "OpenCode"
	Programs []string // the program's names on the trusted PATH, first found wins
	// Args is the program's command line for spec. mcpFile is the per-run MCP config file when
	// MCPFile is set ("" otherwise).
	Args func(spec engines.Spec, mcpFile string) []string
	// Env is set in the agent's environment (after Drop, before the run's own Spec.Env).
	Env func(spec engines.Spec) map[string]string
	// Drop is removed from the agent's environment on top of [keyVariables].
	Drop []string
	// Login is the command the person runs to sign in ("opencode auth login").
	Login string
	// AuthMethod is the authenticate method used when the agent offers it: the agent's stored
	// sign-in. "" sends no authenticate.
	AuthMethod string
	// InitMeta is sent as initialize's _meta.
	InitMeta map[string]any
	// Sandbox reports whether the agent has an OS sandbox of its own Ensemble can turn on on goos;
	// the Args of such an agent turn it on when spec.Sandbox.On is set. Any other agent runs inside
	// Ensemble's own sandbox when the run's is on (package engines/sandbox).
	Sandbox func(goos string) bool
	// State are the folders the agent keeps its sessions, logs and caches in, given its home and
	// environment: the only ones outside the run's that it may change inside Ensemble's sandbox.
	State func(home string, getenv func(string) string) []string
	// Config are the folders the agent reads its settings from, which it makes when they are
	// missing: made before it starts, and read-only inside Ensemble's sandbox (a command there
	// could otherwise plant settings for the next run).
	Config func(home string, getenv func(string) string) []string
	// Prime are the arguments that make the agent set up its Config folders (unpack itself), run
	// once outside the sandbox, with no model and no run, when one of them is empty.
	Prime []string
	// MCPFile: the run's MCP server goes in a config file named on the command line (Copilot takes
	// only http MCP servers from the client), not in session/new.
	MCPFile bool
	// ModelFlag: the model and thinking level are given on the command line (Args), not set
	// through the session's options.
	ModelFlag bool
	// Mode is the session mode a session is set to when it starts in another one (the mode that
	// asks before edits and commands); "" leaves the mode alone.
	Mode string
	// ConfigOff names boolean (or on/off) session options set to off when on: Copilot's allow_all.
	ConfigOff []string
	// ChatArgs, when set, are added to a chat turn's command line (Spec.Chat); it may write the
	// files they name into dir, the run's own folder, removed when the run ends.
	ChatArgs func(spec engines.Spec, dir string) ([]string, error)
	// Delete is the agent's own command that deletes one of its sessions; nil when it has none.
	Delete *deleteCommand
}

// deleteCommand deletes one of an agent's sessions, run in the session's folder.
type deleteCommand struct {
	Args func(id string) []string
	// Gone reads what the command printed (standard output and error) and its exit code: the
	// session is deleted, or the agent has no such session.
	Gone func(out string, code int) bool
}

// signedOut is the sentence a run stops with when the agent has no sign-in.
func (p Profile) signedOut() error {
	return fmt.Errorf("%w: %s is not signed in. Run `%s` there (or press Sign in under Settings → Models)", engines.ErrSignedOut, p.Title, p.Login)
}

func never(string) bool { return false }

// xdg is name's folder in an XDG base folder: the variable's, else def under home.
func xdg(home string, getenv func(string) string, variable, def, name string) string {
	if d := getenv(variable); filepath.IsAbs(d) {
		return filepath.Join(d, name)
	}
	return filepath.Join(home, def, name)
}

// inHome lists folders under a home folder.
func inHome(rel ...string) func(home string, _ func(string) string) []string {
	return func(home string, _ func(string) string) []string {
		out := make([]string, len(rel))
		for i, r := range rel {
			out[i] = filepath.Join(home, r)
		}
		return out
	}
}

func always(string) bool { return true }

func withModel(a []string, spec engines.Spec) []string {
	if spec.Model != "" {
		a = append(a, "--model", spec.Model)
	}
	return a
}

// ensembleTools are Ensemble's own MCP tools, which run without asking (ENSEMBLE_OWN_TOOLS).
var ensembleTools = []string{"ask_person", "report_result", "attach_evidence", "ensemble_context", "ensemble_search", "secret_http"}

// Profiles are the ACP agents this package runs, in the spec's order.
func Profiles() []Profile {
	return []Profile{
		{
			Name: "cursor", Title: "Cursor's agent", Programs: []string{"cursor-agent", "agent"},
			Args: func(spec engines.Spec, _ string) []string {
				sb := "disabled"
				if spec.Sandbox.On {
					sb = "enabled"
				}
				a := []string{"--sandbox", sb, "--workspace", spec.Folder}
				return append(withModel(a, spec), "acp")
			},
			ModelFlag: true,
			Drop:      []string{"CURSOR_API_KEY"},
			Login:     "agent login", AuthMethod: "cursor_login",
			Sandbox: always,
		},
		{
			Name: "copilot", Title: "GitHub Copilot", Programs: []string{"copilot"},
			Args: func(spec engines.Spec, mcpFile string) []string {
				a := []string{"--acp", "--no-auto-update", "--no-ask-user"}
				if mcpFile != "" {
					name := spec.MCP.ServerName()
					a = append(a, "--additional-mcp-config", "@"+mcpFile)
					for _, t := range ensembleTools {
						a = append(a, "--allow-tool", name+"("+t+")")
					}
				}
				a = append(a, "--disallow-temp-dir")
				a = withModel(a, spec)
				if spec.Effort != "" {
					a = append(a, "--reasoning-effort", spec.Effort)
				}
				return a
			},
			ModelFlag: true, MCPFile: true,
			Env:   func(engines.Spec) map[string]string { return map[string]string{"COPILOT_AUTO_UPDATE": "false"} },
			Drop:  []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_ALLOW_ALL", "COPILOT_ASSISTED_APPROVAL"},
			Login: "copilot login",
			// Copilot's own --sandbox (1.0.102) lets commands write the whole home and read its
			// keys by default (tried: the canaries of the sandbox tests fell), so Ensemble's holds it.
			// It runs the code it unpacks into its cache, which no command may change.
			Sandbox: never, State: inHome(".copilot"),
			Config: func(home string, getenv func(string) string) []string {
				return []string{xdg(home, getenv, "XDG_CACHE_HOME", ".cache", "copilot")}
			},
			Prime:     []string{"--version"},
			Mode:      "agent",
			ConfigOff: []string{"allow_all"},
		},
		{
			Name: "gemini", Title: "Gemini CLI", Programs: []string{"gemini"},
			// Its sessions are the folder's: --delete-session takes the id (or an index) there.
			Delete: &deleteCommand{
				Args: func(id string) []string { return []string{"--delete-session", id} },
				Gone: func(out string, code int) bool {
					return code == 0 && (strings.Contains(out, "Deleted session") || strings.Contains(out, "No sessions found") ||
						strings.Contains(out, "Invalid session identifier"))
				},
			},
			Args: func(spec engines.Spec, _ string) []string {
				return withModel([]string{"--acp", "--approval-mode", "default"}, spec)
			},
			ModelFlag: true, ChatArgs: geminiChatArgs,
			// Its own --sandbox is Docker or Podman on Linux, and on macOS a Seatbelt profile that
			// still reads every file (keys too), so Ensemble's holds it.
			Login: "gemini", Sandbox: never, State: inHome(".gemini"),
		},
		{
			Name: "opencode", Title: "OpenCode", Programs: []string{"opencode"},
			Delete: &deleteCommand{
				Args: func(id string) []string { return []string{"session", "delete", id} },
				Gone: func(out string, code int) bool { return code == 0 || strings.Contains(out, "Session not found") },
			},
			Args: func(engines.Spec, string) []string { return []string{"acp"} },
			Env: func(spec engines.Spec) map[string]string {
				rules := opencodeRules(spec)
				env := map[string]string{
					"OPENCODE_PERMISSION":         rules,
					"OPENCODE_CONFIG_CONTENT":     `{"permission":` + rules + `}`,
					"OPENCODE_DISABLE_AUTOUPDATE": "1",
				}
				if !spec.Trusted {
					env["OPENCODE_DISABLE_PROJECT_CONFIG"] = "1"
				}
				return env
			},
			Login: "opencode auth login", Sandbox: never,
			State: func(home string, getenv func(string) string) []string {
				return []string{xdg(home, getenv, "XDG_DATA_HOME", ".local/share", "opencode"),
					xdg(home, getenv, "XDG_STATE_HOME", ".local/state", "opencode"),
					xdg(home, getenv, "XDG_CACHE_HOME", ".cache", "opencode")}
			},
			Config: func(home string, getenv func(string) string) []string {
				return []string{xdg(home, getenv, "XDG_CONFIG_HOME", ".config", "opencode")}
			},
		},
		{
			Name: "qwen", Title: "Qwen Code", Programs: []string{"qwen"},
			Args: func(spec engines.Spec, _ string) []string {
				return withModel([]string{"--acp", "--approval-mode", "default"}, spec)
			},
			ModelFlag: true,
			// Built from Gemini CLI, with the same sandbox: Ensemble's holds it.
			Login: "qwen", Sandbox: never, State: inHome(".qwen"),
		},
		{
			Name: "kimi", Title: "Kimi Code", Programs: []string{"kimi"},
			Args: func(engines.Spec, string) []string { return []string{"acp"} },
			Env: func(spec engines.Spec) map[string]string {
				if spec.Trusted {
					return map[string]string{"KIMI_CODE_TRUST_WORKSPACE": "1"}
				}
				return nil
			},
			Drop:  []string{"MOONSHOT_API_KEY", "KIMI_CODE_TRUST_WORKSPACE"},
			Login: "kimi login", AuthMethod: "login", Mode: "default", Sandbox: never,
			State: inHome(".kimi", ".kimi-code"),
		},
		{
			Name: "vibe", Title: "Mistral Vibe", Programs: []string{"vibe-acp"},
			Args:  func(engines.Spec, string) []string { return nil },
			Login: "vibe-acp --setup", Mode: "ask", Sandbox: never, State: inHome(".vibe"),
		},
		{
			Name: "grok", Title: "Grok Build", Programs: []string{"grok"},
			Args: func(engines.Spec, string) []string {
				return []string{"--permission-mode", "default", "agent", "stdio"}
			},
			Login: "grok login", AuthMethod: "cached_token",
			InitMeta: map[string]any{"clientType": "extension"},
			Sandbox:  never, State: inHome(".grok"),
		},
	}
}

// opencodePermission asks before every edit, command, fetch, subagent and outside path
// (OPENCODE_PERMISSIONS); reads, searches and OpenCode's own bookkeeping go ahead.
const opencodePermission = `{"edit":"ask","bash":"ask","webfetch":"ask","task":"ask","external_directory":"ask"}`

// opencodeRules are OpenCode's permission rules for spec. A chat turn denies every tool of
// OpenCode's own, which OpenCode then does not offer its model, and allows the run's MCP server's
// (OpenCode names them <server>_<tool>; the last rule that matches wins): the assistant's agent
// gets only Ensemble's tools (spec 003 §8), and what asks anyway is refused by the host.
func opencodeRules(spec engines.Spec) string {
	if !spec.Chat {
		return opencodePermission
	}
	server := spec.MCP.ServerName()
	b, _ := json.Marshal(server + "_*")
	return `{"*":"deny",` + string(b) + `:"allow"}`
}

// geminiChatPolicy denies every tool of Gemini CLI's own (shell, files, web, memory, skills,
// subagents) and allows MCP tools. A rule that denies a tool outright keeps it from Gemini's model.
// The allow names no server: Gemini CLI 0.61.0 checks a call twice, once with the server's name
// and once with "mcp_" before it, so a rule for one server is denied by the other check. Only the
// run's server is started (--allowed-mcp-server-names), so MCP tools are Ensemble's.
//
// It is given as an admin policy, whose tier is above the person's own policies, so a tool they
// allowed always does not stay on in a chat. Gemini ignores such a file when the system's own
// policy folder holds one; its tools are then offered, and what asks is refused by the host.
const geminiChatPolicy = `[[rule]]
toolName = "*"
decision = "deny"
priority = 100
denyMessage = "In a chat with Ensemble's assistant only Ensemble's tools are on."

[[rule]]
toolName = "*"
mcpName = "*"
decision = "allow"
priority = 200
`

// geminiChatArgs writes a chat turn's policy into dir and keeps Gemini CLI to the run's MCP server
// (spec 003 §8): the assistant's agent gets only Ensemble's tools.
func geminiChatArgs(spec engines.Spec, dir string) ([]string, error) {
	path := filepath.Join(dir, "chat-policy.toml")
	if err := os.WriteFile(path, []byte(geminiChatPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{"--admin-policy", path, "--allowed-mcp-server-names", spec.MCP.ServerName()}, nil
}

// keyVariables would bill an API account instead of the person's plan, or are Ensemble's own
// tokens; every ACP agent loses them (spec 003 §6, agentEnv).
var keyVariables = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN", "CURSOR_API_KEY",
	"XAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
	"OPENROUTER_API_KEY", "MISTRAL_API_KEY",
	"ENSEMBLE_DESKTOP_TOKEN", "ENSEMBLE_INTERNAL_TOKEN",
}
