// Package engines drives people's coding agents (Claude Code, Codex, the ACP agents) through their
// own machine protocols, behind one interface. A driver starts the agent's CLI with pipes (never a
// PTY), turns every protocol message into an [Event], and asks its [Host] about every tool call the
// agent wants to make and every question it has for the person.
//
// The runtime (runtime/jobs) implements Host: it judges calls with the judge, puts what needs the
// person on Needs me, and records events. This package and its drivers never import runtime/...
package engines

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Driver starts runs of one agent.
type Driver interface {
	// Name is the agent's id: "claude", "codex", "opencode", "gemini", …
	Name() string
	// Start starts the agent on spec and returns once it is running. The run ends when the agent
	// finishes, fails, or ctx is cancelled (which stops it, ending its whole process group).
	Start(ctx context.Context, spec Spec, host Host) (Run, error)
}

// Spec is what one run of an agent is asked to do, and with what.
type Spec struct {
	Folder   string            // the work folder; the agent runs there
	Prompt   string            // the brief
	Model    string            // "" for the agent's default
	Effort   string            // thinking level, "" for the default
	MaxTurns int               // 0: no limit
	Resume   string            // the agent's session id to continue, "" for a new session
	Trusted  bool              // folder trust: the agent may load the folder's own settings
	Env      map[string]string // added to the agent's environment (after the driver removes what it must)
	// CommandEnv is added to the agent's environment after Env, and reaches the commands the agent
	// runs even where the agent filters what they inherit: Codex leaves *KEY*, *SECRET* and *TOKEN*
	// names out of its commands, so it gets these as shell_environment_policy.set. They are a
	// run's environment secrets and git's sign-in settings (spec 002 §8.7.5); never log them.
	CommandEnv map[string]string
	// MCP is the run's own MCP server, offered to the agent ("" command: none).
	MCP MCPServer
	// Home overrides HOME for the agent (tests point the real CLI at the scripted model this way).
	Home string
	// Sandbox is the OS sandbox the run's commands work in (spec 003 §1). With it on, a driver
	// turns on the agent's own sandbox with these paths or, for an agent that has none here, runs
	// the whole agent inside Ensemble's (package engines/sandbox); where neither can run, Start
	// fails with an error wrapping [ErrNoSandbox] that says what to install or turn off.
	Sandbox Sandbox
	// Chat makes the run a chat turn of Ensemble's assistant on the person's own plan (spec 003
	// §8): System replaces the agent's own instructions, the agent gets none of its own tools
	// (shell, files, web), only MCP's, and its text arrives as EventDelta as it streams.
	Chat   bool
	System string
	// Context is the context window: "" the model's standard one, "long" its long one (spec 003
	// §3.2). The runtime asks for "long" only of a model whose catalog entry has LongContext.
	Context string
	// Fast asks for the model's fast mode (Claude Code's fastMode, Codex's fast service tier):
	// faster output that uses more of the plan. Off leaves the agent's own setting.
	Fast bool
}

// AgentEnv is what a driver adds to the agent's environment: Env, then CommandEnv.
func (s Spec) AgentEnv() map[string]string {
	if len(s.CommandEnv) == 0 {
		return s.Env
	}
	out := make(map[string]string, len(s.Env)+len(s.CommandEnv))
	for k, v := range s.Env {
		out[k] = v
	}
	for k, v := range s.CommandEnv {
		out[k] = v
	}
	return out
}

// Sandbox is what a run's OS sandbox lets its commands do. The runtime builds it from the run's
// settings and the judge's zones, so the sandbox and the judge hold the same lines.
type Sandbox struct {
	On bool
	// Write are the folders commands may change: the work folder, the cache and temporary
	// folders, and the folders the run was let into.
	Write []string
	// DenyWrite are never changed, even inside Write: start-up files, the agents' own settings.
	DenyWrite []string
	// DenyRead are never read: keys, sign-ins, browser data, Ensemble's own data, other
	// accounts' files. AllowRead re-opens what lies inside them and the run needs (its folder).
	DenyRead  []string
	AllowRead []string
	// Internet lets commands reach the network; off, the agent's sandbox allows no domain.
	Internet bool
}

// Enforcement is which OS sandbox confines a run's commands, as its driver set it up: the receipt
// every tool step of the run's trace carries, so a run without one is visible as such.
type Enforcement struct {
	// By names the sandbox: the agent's own ("claude", "codex", "cursor", "copilot", "gemini",
	// "qwen"), Ensemble's ("ensemble"), or "" when nothing confines the run.
	By string `json:"by,omitempty"`
	// Whole is set when the whole agent process is inside (Ensemble's), not only its commands.
	Whole bool `json:"whole,omitempty"`
	// Note is one sentence for the trace: what confines the commands, or why nothing does.
	Note string `json:"note"`
}

// ContextLong is Spec.Context for a model's long context window.
const ContextLong = "long"

// OwnServer is the name a run's own MCP server (and a chat turn's) goes by when MCPServer.Name
// is empty. It is not "ensemble", the name `ensemble mcp setup` gives a person's own entry for
// the context bridge: Codex merges a thread's servers into config.toml's by name, and a url from
// the run on a command from the person is a server it cannot start; Claude Code and Gemini CLI
// would let the run's shadow the person's. The judge passes its tools by this name
// (judge.OwnServer, kept equal by a test in runtime/jobs).
const OwnServer = "ensemble_run"

// MCPServer is an MCP server the agent should start over stdio, or reach over HTTP.
type MCPServer struct {
	Name    string // "" for OwnServer
	Command string
	Args    []string
	Env     map[string]string
	URL     string // for a loopback HTTP server instead of a command
	Headers map[string]string
}

// ServerName is the name the agent knows the server by: Name, else OwnServer.
func (m MCPServer) ServerName() string {
	if m.Name != "" {
		return m.Name
	}
	return OwnServer
}

// Run is a running agent.
type Run interface {
	// Wait blocks until the run ends and returns how it ended.
	Wait() (Result, error)
	// Stop asks the agent to stop (its protocol's interrupt), then ends its process group.
	Stop(ctx context.Context) error
}

// Result is how a run ended.
type Result struct {
	SessionID string // the agent's session, to continue later
	Summary   string // the agent's final reply
	Turns     int
	Usage     Usage
	// Gone is set when the session asked for in Spec.Resume no longer exists at the agent; the
	// caller starts a new session with the full brief.
	Gone bool
	// CutOff is set when the model's reply the agent was streaming broke off before its end (the
	// agent's connection to its model dropped, or the body ended early) and the agent did not
	// get it whole on a retry: Summary is the part of it that arrived. The agent may have ended
	// the run with an error for it, or taken the part as the whole reply.
	CutOff bool
}

// Usage is what a run spent.
type Usage struct {
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
	CacheRead    int64   `json:"cacheRead,omitempty"`
	CacheWrite   int64   `json:"cacheWrite,omitempty"`
	CostUSD      float64 `json:"costUsd,omitempty"` // as the agent reports it
}

// Host is what the runtime provides to a running agent.
type Host interface {
	// Permit decides a tool call the agent wants to make. It may block until the person answers
	// (or ctx ends, which withdraws the question).
	Permit(ctx context.Context, call ToolCall) (Permission, error)
	// Ask puts a question from the agent to the person and waits for the answer.
	Ask(ctx context.Context, q Question) (Answer, error)
	// Event records something the agent did; it must not block for long.
	Event(ev Event)
}

// ToolCall is a tool call the agent asks permission for, in the agent's own terms.
type ToolCall struct {
	ID    string          // the agent's tool-use id
	Tool  string          // the agent's tool name ("Bash", "Edit", "mcp__x__y", "commandExecution")
	Input json.RawMessage // its input as the agent sent it
	// Kind, Command, Paths and URL are the driver's reading of the call for the judge.
	Kind    string // shell, read, search, edit, fetch, web_search, mcp
	Command string
	Cwd     string
	Paths   []string
	URL     string
	// Unsandboxed marks a command the agent asks to run outside its sandbox (Claude Code's
	// dangerouslyDisableSandbox, Codex retrying a command its sandbox stopped): only the person
	// grants that.
	Unsandboxed bool
}

// Permission is the answer to a ToolCall.
type Permission struct {
	Allow  bool
	Reason string // for a refusal: the sentence the agent is told
}

// Question is something the agent asks the person.
type Question struct {
	Text        string
	Options     []string
	Recommended int  // index into Options, -1 for none
	FreeText    bool // the person may answer in their own words
}

// Answer is the person's answer.
type Answer struct {
	Option int    // index into Options, -1 for free text
	Text   string // the option's text, or the free text
}

// Event is one thing that happened in a run. Kind says which; the other fields are set as fits.
type Event struct {
	At     time.Time       `json:"at"`
	Kind   EventKind       `json:"kind"`
	Text   string          `json:"text,omitempty"`   // message, thinking, error
	Tool   string          `json:"tool,omitempty"`   // tool_start, tool_end
	ToolID string          `json:"toolId,omitempty"` // tool_start, tool_end
	Input  json.RawMessage `json:"input,omitempty"`  // tool_start
	Output string          `json:"output,omitempty"` // tool_end
	Failed bool            `json:"failed,omitempty"` // tool_end
	Usage  *Usage          `json:"usage,omitempty"`  // usage
	// Session is the agent's session id, on the started event.
	Session string `json:"session,omitempty"`
	// Model and Effort are, on the started event, the model and thinking level as the agent itself
	// reports them, never what was asked ("": the agent does not say; spec 003 §3.4).
	Model  string `json:"model,omitempty"`
	Effort string `json:"effort,omitempty"`
	// ContextTokens is, on a usage event, the size of the context window the agent says it runs
	// with, in tokens (0: the agent does not say).
	ContextTokens int `json:"contextTokens,omitempty"`
	// Enforcement is, on the started event, the sandbox the driver set up around the run.
	Enforcement *Enforcement `json:"enforcement,omitempty"`
}

// EventKind names an Event.
type EventKind string

const (
	EventStarted   EventKind = "started"    // the agent is up; Session set, Model and Effort as reported
	EventMessage   EventKind = "message"    // the agent said Text
	EventDelta     EventKind = "delta"      // a chat turn's Text as it streams; EventMessage follows whole
	EventThinking  EventKind = "thinking"   // the agent thought Text
	EventToolStart EventKind = "tool_start" // the agent called Tool with Input
	EventToolEnd   EventKind = "tool_end"   // the call ToolID returned Output (Failed if it failed)
	EventUsage     EventKind = "usage"      // tokens and cost so far, and ContextTokens when reported
	EventError     EventKind = "error"      // the agent or its protocol reported Text
)

// Errors a driver returns from Start or Wait that the runtime treats specially.
var (
	// ErrNotInstalled: the agent's CLI is not on the trusted PATH. Not retried.
	ErrNotInstalled = errors.New("agent not installed")
	// ErrSignedOut: the agent has no sign-in. Not retried.
	ErrSignedOut = errors.New("agent signed out")
	// ErrStopped: the run was stopped on request.
	ErrStopped = errors.New("run stopped")
	// ErrNoSandbox: the run asked for a sandbox that cannot run here. Not retried; the error's
	// text names what to install or to turn the sandbox off for the run.
	ErrNoSandbox = errors.New("no sandbox here")
)

// NoSandbox is the error for a sandbox that cannot run here: its text is the sentence alone, and
// errors.Is finds [ErrNoSandbox] in it.
func NoSandbox(sentence string) error { return noSandbox(sentence) }

type noSandbox string

func (e noSandbox) Error() string        { return string(e) }
func (e noSandbox) Is(target error) bool { return target == ErrNoSandbox }

// Detector is a driver that can say whether this computer has its agent, which version, and
// whether it is signed in. Detection runs the agent's own commands (`--version`, its sign-in
// status), each bounded by ctx.
type Detector interface {
	Detect(ctx context.Context, home string) Detection
}

// SessionDeleter is a driver that can delete one of its agent's own sessions (Claude Code's
// transcript, a Codex thread, an OpenCode or Gemini CLI session), so a session deleted in
// Ensemble is gone at the agent too.
type SessionDeleter interface {
	// DeleteSession deletes the agent's session id, made in folder. A session the agent no longer
	// has is no error: it is gone. An error is worth trying again later.
	DeleteSession(ctx context.Context, id, folder string) error
}

// ErrNoSession is returned by a SessionDeleter for an id that cannot be a session of its agent.
var ErrNoSession = errors.New("not a session id of this agent")

// Detection is what a Detector found.
type Detection struct {
	Name      string   `json:"name"`
	Title     string   `json:"title"`
	Installed bool     `json:"installed"`
	Path      string   `json:"path,omitempty"`
	Version   string   `json:"version,omitempty"`
	SignedIn  SignIn   `json:"signedIn"`
	Login     string   `json:"login,omitempty"` // the command that signs in
	Models    []string `json:"models,omitempty"`
	// Catalog is what the agent says of each model in Models, where it says more than names
	// (Claude Code from Ensemble's table for its version, Codex from model/list).
	Catalog []ModelInfo `json:"catalog,omitempty"`
	// Problem is one sentence a person can act on when the agent cannot run now.
	Problem string `json:"problem,omitempty"`
	// Sandbox is whether a run of the agent with the sandbox on can start here, and what confines it.
	Sandbox *SandboxCheck `json:"sandbox,omitempty"`
}

// SandboxCheck is whether an agent's commands can be sandboxed on this computer.
type SandboxCheck struct {
	OK bool `json:"ok"`
	// By and Whole are as in [Enforcement]: whose sandbox would confine the run.
	By    string `json:"by,omitempty"`
	Whole bool   `json:"whole,omitempty"`
	// Problem is, when it cannot, the sentence a run with the sandbox on stops with: what to
	// install, or to turn the sandbox off.
	Problem string `json:"problem,omitempty"`
}

// CheckOf is the check a sandbox's receipt and its error make.
func CheckOf(enf Enforcement, err error) *SandboxCheck {
	if err != nil {
		return &SandboxCheck{Problem: err.Error()}
	}
	return &SandboxCheck{OK: true, By: enf.By, Whole: enf.Whole}
}

// ModelInfo is one model an agent offers, with the choices it takes (spec 003 §3.2).
type ModelInfo struct {
	ID          string `json:"id"` // what Spec.Model names it by
	Name        string `json:"name,omitempty"`
	Vendor      string `json:"vendor,omitempty"` // who makes it: Anthropic, OpenAI
	Description string `json:"description,omitempty"`
	// Default marks the model the agent runs when Spec.Model is "".
	Default bool `json:"default,omitempty"`
	// Efforts are the thinking levels it takes, lowest first; none: it takes no level.
	Efforts       []string `json:"efforts,omitempty"`
	DefaultEffort string   `json:"defaultEffort,omitempty"`
	// Context is its standard window in tokens (0: not known); LongContext its long one, when
	// the model has a second window to choose (0: none).
	Context     int  `json:"context,omitempty"`
	LongContext int  `json:"longContext,omitempty"`
	Fast        bool `json:"fast,omitempty"` // it has a fast mode
}

// SignIn is whether an agent is signed in.
type SignIn string

const (
	SignedIn  SignIn = "yes"
	SignedOut SignIn = "no"
	// SignInUnknown: the agent has no way to ask without starting a session; it says so on first use.
	SignInUnknown SignIn = "unknown"
)
