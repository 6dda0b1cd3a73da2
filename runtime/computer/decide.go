package computer

import (
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/runtime/judge"
)

// Op is the kind of a computer call.
type Op string

// The calls the decision order knows.
const (
	OpRun   Op = "run"   // a command line, or a line typed in a terminal
	OpRead  Op = "read"  // reading files: git, sharing a file
	OpWrite Op = "write" // writing, moving or deleting files
	OpHTTP  Op = "http"  // a request to one of this computer's own servers
	// OpBrowse is a page a browser tab opens (spec 002 §8.16): the public web opens without
	// asking; this computer's own addresses and its network's ask once each.
	OpBrowse Op = "browse"
)

// Call is one call to decide.
type Call struct {
	Op Op
	// Folder is where the call works: absolute and clean (the node's own folder when it named
	// none).
	Folder  string
	Command string   // OpRun; OpAct: the element's name
	Paths   []string // OpRead, OpWrite: absolute
	URL     string   // OpHTTP, OpBrowse, OpAct
}

// Scope is what an answer is kept for: a folder, an address (host:port), or an action on a site.
type Scope struct {
	Kind  string `json:"kind"` // folder, address or act
	Value string `json:"value"`
}

// Covers reports whether a folder scope holds path (the folder itself or what is inside it).
func (s Scope) Covers(path string) bool { return s.Kind == ScopeFolder && within(path, s.Value) }

// Scope kinds.
const (
	ScopeFolder  = "folder"
	ScopeAddress = "address"
)

// Rung is the step of the decision order that decided a call.
type Rung string

// The rungs, in order (spec 002 §8.13).
const (
	RungFloor      Rung = "floor"
	RungOwn        Rung = "own"
	RungKept       Rung = "kept"
	RungUnattended Rung = "unattended"
	RungAsk        Rung = "ask"
	RungOnce       Rung = "once" // the owner answered this very call on its card
)

// Policy is what the decision order weighs a call against: where things are on this computer,
// the owner's kept answers, and how the node works.
type Policy struct {
	Home      string
	DataDir   string
	Workspace string
	Binary    string // Ensemble's own program
	Runtime   string // the runtime's own address, host:port
	// Own are the folders that count as the node's own: its folder, every node's folder and
	// Ensemble's run folders.
	Own []string
	// Kept are the owner's answers that hold now: Always ones and this mission's.
	Kept []Scope
	// Unattended: the node's run profile runs unattended and its computer work is not "ask".
	Unattended bool
	// Sandboxed: an OS sandbox confines commands here. Without one, commands in the node's own
	// folders ask once a mission and Always is never offered for commands.
	Sandboxed bool
	// Granted are scopes the owner allowed for this one call (a card's Once).
	Granted []Scope
	// Temp are the shared temporary folders, which every command may use.
	Temp []string
}

// Decision is the decision order's answer for one call.
type Decision struct {
	Decision judge.Decision `json:"decision"`
	Rung     Rung           `json:"rung"`
	// Reason is one sentence for the node: why it is refused, or what the card asks.
	Reason string `json:"reason,omitempty"`
	// Ask are the scopes the card asks for; Always says the card may offer Always for them.
	Ask    []Scope `json:"ask,omitempty"`
	Always bool    `json:"always,omitempty"`
	// Write are the folders the command may change inside the sandbox.
	Write []string `json:"write,omitempty"`
}

// Allowed reports whether the call may run now.
func (d Decision) Allowed() bool { return d.Decision == judge.Allow }

// refusedGit are the git commands a node never runs itself: they need the owner's sign-in, which
// an agent session has.
var refusedGit = []string{"push", "fetch", "pull"}

// gitSub is the subcommand of a git command kind ("git -C . fetch --all" is fetch).
func gitSub(kind string) string {
	f := strings.Fields(kind)
	if len(f) == 0 || f[0] != "git" {
		return ""
	}
	for i := 1; i < len(f); i++ {
		switch {
		case f[i] == "-C" || f[i] == "-c" || f[i] == "--git-dir" || f[i] == "--work-tree" || f[i] == "--namespace":
			i++
		case !strings.HasPrefix(f[i], "-"):
			return f[i]
		}
	}
	return ""
}

// Decide is the decision order of spec 002 §8.13 for one call: the hard floor; the node's own
// folders; the owner's kept answers; unattended work inside the OS sandbox; else a card. It is
// pure: the same call and policy always give the same decision.
func Decide(c Call, p Policy) Decision {
	if !filepath.IsAbs(c.Folder) {
		return refused("The folder must be an absolute path on this computer.")
	}
	c.Folder = filepath.Clean(c.Folder)
	switch c.Op {
	case OpHTTP:
		return decideHTTP(c, p)
	case OpBrowse:
		return decideBrowse(c, p)
	case OpAct:
		return decideAct(c, p)
	}
	v := judge.Decide(judgeCall(c), judgeSettings(c, p))
	var d Decision
	switch {
	case v.Decision == judge.Refuse && sudoNeeded(v):
		return refused("A command as the administrator goes through computer_sudo, which asks your owner on a card with the exact command.")
	case v.Decision == judge.Refuse:
		return refused(v.Reason + " Your owner can run it themselves in their own terminal.")
	}
	for _, k := range v.Touches.Kinds {
		if sub := gitSub(k); slices.Contains(refusedGit, sub) {
			return refused("`git " + sub + "` needs your owner's sign-in, which a node does not use: start an agent session for it.")
		}
	}
	command := c.Op == OpRun
	r := p.reach(c, v.Touches, command)
	d.Write = append(append([]string{c.Folder}, p.Own...), r.kept...)
	switch {
	case len(r.need) == 0 && v.Decision == judge.Ask:
		// Something the judge asks about wherever it runs (a script from the web): each time.
		d.Decision, d.Rung, d.Reason = judge.Ask, RungAsk, v.Reason
		d.Ask = []Scope{{ScopeFolder, c.Folder}}
	case len(r.need) == 0:
		d.Decision, d.Rung = judge.Allow, r.rung
	case p.Unattended && p.Sandboxed && command:
		// The sandbox holds it to what d.Write names.
		d.Decision, d.Rung = judge.Allow, RungUnattended
	default:
		d.Decision, d.Rung, d.Ask = judge.Ask, RungAsk, r.need
		d.Always = !command || p.Sandboxed
		d.Reason = "Your owner has not let you into " + describe(r.need) + " yet: it is asked on a card."
		if command && !p.Sandboxed {
			d.Reason = "This computer has no OS sandbox, so commands ask once a mission, even in your own folder: it is asked on a card."
		}
	}
	return d
}

func refused(why string) Decision {
	return Decision{Decision: judge.Refuse, Rung: RungFloor, Reason: why}
}

// sudoNeeded reports a refusal only for running as the administrator.
func sudoNeeded(v judge.Verdict) bool {
	return v.Rule == "never" && slices.ContainsFunc(v.Touches.Programs, judge.AdminProgram)
}

func judgeCall(c Call) judge.Call {
	switch c.Op {
	case OpRun:
		return judge.Call{Tool: judge.ToolShell, Command: c.Command, Cwd: c.Folder}
	case OpWrite:
		return judge.Call{Tool: judge.ToolEdit, Paths: c.Paths, Cwd: c.Folder}
	}
	return judge.Call{Tool: judge.ToolRead, Paths: c.Paths, Cwd: c.Folder}
}

// judgeSettings are the judge's settings that leave only its absolute refusals: the floor,
// keys and sign-ins, Ensemble's own data, other accounts. Where the node may go is this
// package's decision order, not a run's mode.
func judgeSettings(c Call, p Policy) judge.Settings {
	var code []string
	if p.Binary != "" {
		code = []string{p.Binary}
	}
	return judge.Settings{Mode: judge.ModeUnattended, Folder: c.Folder, Sandbox: p.Sandboxed, Outside: judge.OutsideReadWrite,
		Git: judge.GitAny, Internet: true, Home: p.Home, DataDir: p.DataDir, Workspace: p.Workspace, CodeDirs: code,
		Runtime: p.Runtime, Binary: p.Binary, Writable: slices.Concat(p.Own, p.Temp)}
}

// reach is what a call reaches beyond the node's own folders: the folders still to ask for, the
// kept ones it uses, and the rung that lets the rest go ahead.
type reach struct {
	need []Scope
	kept []string
	rung Rung
}

// reach weighs where the call works, what it changes, and what it reads in the owner's home
// folder (system files are read freely; the floor and the sandbox keep the secret ones). Without
// an OS sandbox a command's own folders are not its own: they ask once a mission.
func (p Policy) reach(c Call, t judge.Touches, command bool) reach {
	r := reach{rung: RungOwn}
	add := func(path string, folder bool) {
		path = filepath.Clean(path)
		if p.temp(path) || p.own(path) && (!command || p.Sandboxed) {
			return
		}
		if k, ok := match(path, ScopeFolder, p.Granted); ok {
			r.rung, r.kept = RungOnce, append(r.kept, k)
			return
		}
		if k, ok := match(path, ScopeFolder, p.Kept); ok {
			r.kept = append(r.kept, k)
			if r.rung != RungOnce {
				r.rung = RungKept
			}
			return
		}
		if !folder {
			path = filepath.Dir(path)
		}
		if !slices.Contains(r.need, Scope{ScopeFolder, path}) {
			r.need = append(r.need, Scope{ScopeFolder, path})
		}
	}
	add(c.Folder, true)
	writes, reads := t.Writes, t.Reads
	switch c.Op {
	case OpWrite:
		writes = append(writes, c.Paths...)
	case OpRead:
		reads = append(reads, c.Paths...)
	}
	for _, w := range writes {
		if filepath.IsAbs(w) && !within(w, c.Folder) {
			add(w, false)
		}
	}
	for _, rd := range reads {
		if filepath.IsAbs(rd) && !within(rd, c.Folder) && p.Home != "" && within(rd, p.Home) {
			add(rd, false)
		}
	}
	return r
}

func (p Policy) own(path string) bool {
	for _, o := range p.Own {
		if within(path, o) {
			return true
		}
	}
	return false
}

// match finds the kept scope that covers value: a folder covers what is inside it, an address
// only itself.
func match(value, kind string, kept []Scope) (string, bool) {
	for _, k := range kept {
		switch {
		case k.Kind != kind:
		case kind == ScopeFolder && within(value, k.Value), kind != ScopeFolder && k.Value == value:
			return k.Value, true
		}
	}
	return "", false
}

func describe(need []Scope) string {
	var names []string
	for _, n := range need {
		names = append(names, n.Value)
	}
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	return strings.Join(names, ", ")
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

func (p Policy) temp(path string) bool {
	for _, t := range p.Temp {
		if within(path, t) {
			return true
		}
	}
	return path == "/dev/null"
}

// decideHTTP: only this computer's own servers; the first use of an address asks, unless kept.
func decideHTTP(c Call, p Policy) Decision {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return refused("computer_http takes an http:// or https:// address on this computer, such as http://127.0.0.1:3000/.")
	}
	if u.User != nil {
		return refused("computer_http sends no user name or password in the address.")
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return refused("computer_http reaches only this computer's own servers (localhost, 127.0.0.1 or ::1); for a web page use the web tools.")
	}
	addr := Address(u)
	if p.Runtime != "" && sameAddr(addr, p.Runtime) {
		return refused("Ensemble's own address is not for a node's requests.")
	}
	need := []Scope{{ScopeAddress, addr}}
	if _, ok := match(addr, ScopeAddress, p.Granted); ok {
		return Decision{Decision: judge.Allow, Rung: RungOnce}
	}
	if _, ok := match(addr, ScopeAddress, p.Kept); ok {
		return Decision{Decision: judge.Allow, Rung: RungKept}
	}
	return Decision{Decision: judge.Ask, Rung: RungAsk, Ask: need, Always: true,
		Reason: "This computer's own address " + addr + " asks your owner the first time, on a card."}
}

// Address is a URL's host:port, with the scheme's port where it names none.
func Address(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	host := u.Hostname()
	if host == "localhost" || host == "::1" {
		host = "127.0.0.1" // one address however it is spelled
	}
	return net.JoinHostPort(host, port)
}

func sameAddr(a, b string) bool {
	ah, ap, _ := net.SplitHostPort(a)
	bh, bp, _ := net.SplitHostPort(b)
	loop := func(h string) bool { ip := net.ParseIP(h); return h == "localhost" || ip != nil && ip.IsLoopback() }
	return ap == bp && (ah == bh || loop(ah) && loop(bh))
}
