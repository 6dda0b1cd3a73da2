package jobs

import (
	"path/filepath"
	"strings"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// Settings are a run's settings: how much it may do without asking, where, and for how long.
// The zero value of each field is the most careful choice, except Sandbox and Internet, which a
// request sets or leaves to [DefaultSettings].
type Settings struct {
	Mode            judge.Mode    `json:"mode"`            // ask, review, unattended
	Trusted         bool          `json:"trusted"`         // the person trusts the folder named, by name
	Sandbox         bool          `json:"sandbox"`         // the agent's own OS sandbox confines its commands
	Outside         judge.Outside `json:"outside"`         // none, read, readwrite
	Git             judge.Git     `json:"git"`             // local, commit, any
	AskBeforeCommit bool          `json:"askBeforeCommit"` // ask before every commit, in every mode
	Internet        bool          `json:"internet"`
	MaxMinutes      int           `json:"maxMinutes"`  // 0: no limit; time waiting on Needs me is not counted
	MaxTurns        int           `json:"maxTurns"`    // 0: no limit
	Model           string        `json:"model"`       // "" for the agent's default
	Effort          string        `json:"effort"`      // "" for the agent's default
	ContextTier     string        `json:"contextTier"` // "" the model's standard window, "long" its long one
	Fast            bool          `json:"fast"`        // the model's fast mode: faster, and more of the plan
	// Secrets names the saved secrets the run gets (spec 002 §8.7.5); none leaves it to the
	// computer's mode (ensemble secrets mode).
	Secrets []string `json:"secrets,omitempty"`
	// SecretsNamed: the run gets only Secrets, even none, whatever the computer's mode (a node's
	// run: spec 002 §8.7.5). Set by who assigns it, never by a request.
	SecretsNamed bool `json:"secretsNamed,omitempty"`
}

// DefaultSettings are what a run gets for what its request leaves out: Ask mode, the sandbox and
// the internet on, reading outside the folder, local git only.
func DefaultSettings() Settings {
	return Settings{Mode: judge.ModeAsk, Sandbox: true, Outside: judge.OutsideRead, Git: judge.GitLocal, Internet: true}
}

// SettingsInput is a request's settings; fields left out take [DefaultSettings].
type SettingsInput struct {
	Mode            *string `json:"mode,omitempty"`
	Trusted         *bool   `json:"trusted,omitempty"`
	Sandbox         *bool   `json:"sandbox,omitempty"`
	Outside         *string `json:"outside,omitempty"`
	Git             *string `json:"git,omitempty"`
	AskBeforeCommit *bool   `json:"askBeforeCommit,omitempty"`
	Internet        *bool   `json:"internet,omitempty"`
	MaxMinutes      *int    `json:"maxMinutes,omitempty"`
	MaxTurns        *int    `json:"maxTurns,omitempty"`
	Model           *string `json:"model,omitempty"`
	Effort          *string `json:"effort,omitempty"`
	ContextTier     *string `json:"contextTier,omitempty"` // standard ("" too) or long
	Fast            *bool   `json:"fast,omitempty"`
	// Secrets names the saved secrets the run gets, as environment variable names.
	Secrets *[]string `json:"secrets,omitempty"`
}

// Resolve checks in and fills in the defaults. Its error is a sentence for the person.
func (in SettingsInput) Resolve() (Settings, error) {
	s := DefaultSettings()
	if in.Mode != nil {
		switch m := judge.Mode(*in.Mode); m {
		case judge.ModeAsk, judge.ModeReview, judge.ModeUnattended:
			s.Mode = m
		default:
			return s, problem.Invalid("Mode %q is not one of ask, review or unattended.", *in.Mode)
		}
	}
	if in.Outside != nil {
		switch o := judge.Outside(*in.Outside); o {
		case judge.OutsideNone, judge.OutsideRead, judge.OutsideReadWrite:
			s.Outside = o
		default:
			return s, problem.Invalid("Outside access %q is not one of none, read or readwrite.", *in.Outside)
		}
	}
	if in.Git != nil {
		switch g := judge.Git(*in.Git); g {
		case judge.GitLocal, judge.GitCommit, judge.GitAny:
			s.Git = g
		default:
			return s, problem.Invalid("Git permission %q is not one of local, commit or any.", *in.Git)
		}
	}
	for _, f := range []struct {
		p   *bool
		dst *bool
	}{{in.Trusted, &s.Trusted}, {in.Sandbox, &s.Sandbox}, {in.AskBeforeCommit, &s.AskBeforeCommit}, {in.Internet, &s.Internet}, {in.Fast, &s.Fast}} {
		if f.p != nil {
			*f.dst = *f.p
		}
	}
	if in.ContextTier != nil {
		switch c := strings.TrimSpace(*in.ContextTier); c {
		case "", "standard":
			s.ContextTier = ""
		case engines.ContextLong:
			s.ContextTier = c
		default:
			return s, problem.Invalid("Context window %q is not one of standard or long.", *in.ContextTier)
		}
	}
	if in.MaxMinutes != nil {
		if *in.MaxMinutes < 0 || *in.MaxMinutes > 7*24*60 {
			return s, problem.Invalid("The minutes limit must be between 0 (none) and %d (a week).", 7*24*60)
		}
		s.MaxMinutes = *in.MaxMinutes
	}
	if in.MaxTurns != nil {
		if *in.MaxTurns < 0 || *in.MaxTurns > 10_000 {
			return s, problem.Invalid("The turns limit must be between 0 (none) and 10000.")
		}
		s.MaxTurns = *in.MaxTurns
	}
	if in.Secrets != nil {
		names, err := secrets.CleanNames(*in.Secrets)
		if err != nil {
			return s, err
		}
		if len(names) > 0 {
			s.Secrets = names
		}
	}
	for _, f := range []struct {
		p    *string
		dst  *string
		name string
	}{{in.Model, &s.Model, "model"}, {in.Effort, &s.Effort, "thinking level"}} {
		if f.p == nil {
			continue
		}
		v := strings.TrimSpace(*f.p)
		if len(v) > 100 || strings.ContainsAny(v, " \t\n\r\x00") {
			return s, problem.Invalid("The %s %q is not a name an agent takes.", f.name, *f.p)
		}
		*f.dst = v
	}
	return s, nil
}

// Places are what the judge needs to know of this computer, besides the run's own folder
// ([NewPlaces] fills them).
type Places struct {
	Home      string // the person's home folder
	DataDir   string // Ensemble's data folder
	Workspace string // <data>/workspace
	Writable  []string
	SkillDirs []string // the agents' own skill folders
	Runtime   string   // the runtime's own address, host:port; "" when none runs
	Binary    string   // Ensemble's own program
	Resolve   func(string) (string, error)
	Glob      func(string) ([]string, error)
	// GitClean says whether the repository a folder is in has a git config that runs nothing
	// (judge.GitConfigClean).
	GitClean func(dir string) bool
}

// JudgeSettings turns a run's settings, its folder and what the person kept for the run into the
// judge's settings. Folder trust counts only for the very folder the person named (kind folder):
// a worktree or a workspace folder is Ensemble's, not one the person trusted.
func JudgeSettings(s Settings, kind FolderKind, folder string, p Places, kept judge.Kept) judge.Settings {
	clean := func(d string) string {
		if d == "" {
			return ""
		}
		d = filepath.Clean(d)
		// The judge compares paths as they are: these are where their links lead.
		if p.Resolve != nil {
			if r, err := p.Resolve(d); err == nil && filepath.IsAbs(r) {
				return filepath.Clean(r)
			}
		}
		return d
	}
	var codeDirs []string
	if p.Binary != "" {
		codeDirs = []string{p.Binary}
	}
	gitClean := false
	if p.GitClean != nil {
		gitClean = p.GitClean(clean(folder))
	}
	return judge.Settings{
		Mode:            s.Mode,
		Folder:          clean(folder),
		Trusted:         s.Trusted && kind == FolderNamed,
		Sandbox:         s.Sandbox,
		Outside:         s.Outside,
		Git:             s.Git,
		AskBeforeCommit: s.AskBeforeCommit,
		Internet:        s.Internet,
		Home:            clean(p.Home),
		DataDir:         clean(p.DataDir),
		Workspace:       clean(p.Workspace),
		Writable:        p.Writable,
		SkillDirs:       p.SkillDirs,
		CodeDirs:        codeDirs,
		Runtime:         p.Runtime,
		Binary:          p.Binary,
		GitConfigClean:  gitClean,
		GitCleanAt:      p.GitClean,
		Kept:            kept,
		Resolve:         p.Resolve,
		Glob:            p.Glob,
	}
}

// JudgeCall reads an engine's tool call as the judge's. MCP tools arrive as mcp__server__tool.
func JudgeCall(c engines.ToolCall) judge.Call {
	call := judge.Call{Tool: judge.Tool(c.Kind), Command: c.Command, Cwd: c.Cwd, Paths: c.Paths, URL: c.URL, Unsandboxed: c.Unsandboxed}
	if call.Tool == "" && strings.HasPrefix(c.Tool, "mcp__") {
		call.Tool = judge.ToolMCP
	}
	if call.Tool == judge.ToolMCP {
		rest := strings.TrimPrefix(c.Tool, "mcp__")
		server, name, ok := strings.Cut(rest, "__")
		if !ok {
			server, name = "", rest
		}
		call.Server, call.Name = server, name
	}
	return call
}

// describe is the settings as a person reads them, for the run's first event ("Ask mode; internet
// on, sandboxed; may read outside its folder; no commits"): what was asked, before the model's
// catalog is checked.
func (s Settings) describe() string {
	mode := map[judge.Mode]string{judge.ModeReview: "Review only", judge.ModeUnattended: "Run unattended"}[s.Mode]
	if mode == "" {
		mode = "Ask mode"
	}
	net := "internet on"
	if !s.Internet {
		net = "internet off"
	}
	if s.Sandbox {
		net += ", sandboxed"
	} else {
		net += ", no sandbox"
	}
	outside := map[judge.Outside]string{judge.OutsideNone: "stays in its folder",
		judge.OutsideReadWrite: "may change files outside its folder"}[s.Outside]
	if outside == "" {
		outside = "may read outside its folder"
	}
	git := map[judge.Git]string{judge.GitCommit: "may commit, not push", judge.GitAny: "may commit and push"}[s.Git]
	if git == "" {
		git = "no commits"
	}
	parts := []string{mode, net, outside, git}
	if s.AskBeforeCommit && s.Git != judge.GitLocal && s.Git != "" {
		parts = append(parts, "asks before each commit")
	}
	if s.Trusted {
		parts = append(parts, "trusted folder")
	}
	if s.ContextTier != "" {
		parts = append(parts, s.ContextTier+" context")
	}
	if s.Fast {
		parts = append(parts, "fast mode")
	}
	if len(s.Secrets) > 0 {
		parts = append(parts, "secrets "+strings.Join(s.Secrets, ", "))
	}
	return strings.Join(parts, "; ")
}
