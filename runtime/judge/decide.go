package judge

import (
	"path/filepath"
	"strings"
)

// Decide judges one tool call under the run's settings. It is pure: the same call and settings
// always give the same verdict, and it never panics on any input.
func Decide(call Call, s Settings) (v Verdict) {
	defer func() {
		if p := recover(); p != nil {
			v = Verdict{Decision: Ask, Rule: "internal", Reason: "Ensemble could not judge this call (an internal error), so it waits for your answer."}
		}
	}()
	if !filepath.IsAbs(s.Folder) {
		return Verdict{Decision: Refuse, Rule: "no-folder", Reason: "This run has no folder set, so Ensemble cannot judge its calls; start it again with a folder."}
	}
	s.Folder = filepath.Clean(s.Folder)
	if call.Unsandboxed {
		// Judged as what it is: a command nothing but the judge confines.
		s.Sandbox = false
	}
	if s.Home != "" {
		s.Home = filepath.Clean(s.Home)
	}
	if s.DataDir != "" {
		s.DataDir = filepath.Clean(s.DataDir)
	}
	s.Binary = binaryPath(s.Binary)
	j := &judgement{s: &s, quiet: true}
	switch call.Tool {
	case ToolShell:
		j.shell(call)
	case ToolRead, ToolSearch:
		j.files(call, false)
	case ToolEdit:
		j.files(call, true)
	case ToolFetch:
		j.fetch(call)
	case ToolWebSearch:
		j.webSearch()
	case ToolMCP:
		j.mcp(call)
	default:
		return Verdict{Decision: Ask, Rule: "unknown-tool", Reason: "Ensemble does not know the tool `" + string(call.Tool) + "`, so it waits for your answer."}
	}
	return j.verdict(call)
}

const (
	rankFloor = iota
	rankNever
	rankZone
	rankZoneWrite
	rankSetting
	rankClone
)

type finding struct {
	rank   int
	rule   string
	reason string
	kind   string // for asks: the command kind a kept "allow for this run" answer overrides
}

// judgement gathers what the rules found about one call.
type judgement struct {
	s        *Settings
	refusals []finding
	asks     []finding
	quiet    bool   // every part of the call is a quiet read
	modeWhat string // the first part that follows the mode, for the reason
	modeKind []string
	kept     bool // "edits for this run" covers the mode
	t        Touches
	clone    *Clone
	outside  []string          // outside paths, for sandbox retries
	links    map[string]string // the symbolic links the line makes, link → target
	copies   map[string]bool   // where the line copies Ensemble's program
}

func (j *judgement) refuse(rank int, rule, reason string) {
	j.refusals = append(j.refusals, finding{rank: rank, rule: rule, reason: reason})
}

func (j *judgement) ask(rule, reason, kind string) {
	j.asks = append(j.asks, finding{rule: rule, reason: reason, kind: kind})
}

// follows marks a part of the call that follows the mode.
func (j *judgement) follows(what, kind string) {
	j.quiet = false
	if j.modeWhat == "" {
		j.modeWhat = what
	}
	if kind != "" {
		j.modeKind = appendUnique(j.modeKind, kind)
	}
}

func (j *judgement) mode() Mode {
	switch j.s.Mode {
	case ModeReview, ModeUnattended:
		return j.s.Mode
	}
	return ModeAsk
}

func appendUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// display shortens a path for a sentence: ~/… under the home folder.
func (j *judgement) display(p string) string {
	if h := j.s.Home; h != "" && within(p, h) {
		return "~" + p[len(h):]
	}
	return p
}

// pathOf makes a known word an absolute path in cwd.
func (j *judgement) pathOf(cwd string, w word) (string, bool) {
	v := w.val
	if !w.known {
		i := strings.Index(v, unknown)
		v = v[:i]
		if k := strings.LastIndexByte(v, '/'); k >= 0 {
			v = v[:k+1]
		} else {
			return "", false
		}
		if v == "" {
			return "", false
		}
	}
	if v == "" {
		return "", false
	}
	p := resolve(cwd, v)
	return p, p != ""
}

// zoneOf classifies a path and where its links lead (the line's own, then Settings.Resolve's);
// the worse wins.
func (j *judgement) zoneOf(p string) (zone, string) {
	z := classify(p, j.s)
	worse := func(rp string) bool {
		rz := classify(rp, j.s)
		return rz > z || (z == zInside && rz != zInside && rz != zDevice)
	}
	if len(j.links) > 0 {
		if lp := throughLinks(p, j.links); lp != p && worse(lp) {
			return classify(lp, j.s), lp
		}
	}
	if rp := j.resolved(p); rp != p && worse(rp) {
		return classify(rp, j.s), rp
	}
	return z, p
}

// resolved is p with Settings.Resolve's links followed (p itself without it).
func (j *judgement) resolved(p string) string {
	if j.s.Resolve == nil {
		return p
	}
	rp, err := j.s.Resolve(p)
	if err != nil || rp == "" || !filepath.IsAbs(rp) {
		return p
	}
	return filepath.Clean(rp)
}

// real is where p leads through every link the judge knows of: the line's and the disk's.
func (j *judgement) real(p string) string {
	if len(j.links) > 0 {
		p = throughLinks(p, j.links)
	}
	return j.resolved(p)
}

// judgePath applies the zones to one path a call reads or writes. A mention (a path written in
// inline code) is only refused where the zones refuse it; the rest is the code's to follow the mode.
func (j *judgement) judgePath(p string, write, admin, mention bool) {
	p = procAlias(p)
	z, real := j.zoneOf(p)
	d := "`" + j.display(p) + "`"
	if real != p {
		d = "`" + j.display(p) + "` (a link to `" + j.display(real) + "`)"
	}
	if mention {
		switch z {
		case zData, zSecret, zOther, zProc:
		default:
			return
		}
	}
	if write {
		j.t.Writes = appendUnique(j.t.Writes, p)
	} else if z != zDevice {
		j.t.Reads = appendUnique(j.t.Reads, p)
	}
	switch z {
	case zDevice:
		return
	case zProc:
		j.refuse(rankZone, "other-process", d+" "+whyProc)
		return
	case zData:
		j.refuse(rankZone, "data", d+" is Ensemble's own data, which a run may never read or change.")
		return
	case zSecret, zOther:
		if admin {
			j.refuse(rankFloor, "floor.admin-keys", d+" "+whyAdminKeys)
			return
		}
		if z == zSecret {
			j.refuse(rankZone, "secret", d+" holds keys, sign-ins or browser data, which a run may never read or change.")
		} else {
			j.refuse(rankZone, "other-account", d+" belongs to another account on this computer, which a run may never touch.")
		}
		return
	case zDisk:
		if write {
			j.refuse(rankFloor, "floor.disk-write", d+" "+whyRawDisk)
		} else {
			j.refuse(rankZone, "disk-read", d+" is a whole disk; a run reads files, not raw disks.")
		}
		return
	}
	if write {
		switch z {
		case zBoot:
			j.refuse(rankFloor, "floor.boot", "Changing "+d+" "+whyBoot)
			return
		case zSystem:
			j.refuse(rankFloor, "floor.system", "Writing to "+d+" "+whySystem)
			return
		case zStartup:
			j.refuse(rankZoneWrite, "startup", d+" runs each time you open a shell, sign in or start a tool, so a run may not change it; change it yourself if you need to.")
			return
		case zCode:
			j.refuse(rankZoneWrite, "code", d+" is Ensemble's own code, which a run may not change.")
			return
		case zInside:
			if hookFile(p, j.s.Folder) {
				j.ask("hook", d+" can run programs later, outside this run's rules, so each change to it waits for your answer.", "")
			}
			j.follows("changing "+d, "")
			return
		}
		j.outsideWrite(p, d)
		return
	}
	switch z {
	case zInside:
		if secretName(p) {
			j.follows("reading "+d+", which may hold keys or sign-ins", "")
		}
		return
	case zSkill:
		return
	}
	if j.s.Outside == OutsideNone {
		j.refuse(rankSetting, "outside-none", d+" is outside the run folder, and this run has no access outside it; change Outside access in the run's settings to let it read there.")
		return
	}
	j.outside = append(j.outside, p)
	j.follows("reading "+d+" outside the run folder", "")
}

func (j *judgement) outsideWrite(p, d string) {
	j.outside = append(j.outside, p)
	if withinAny(p, j.s.Writable) || withinAny(p, j.s.Kept.Folders) {
		j.follows("changing "+d, "")
		return
	}
	switch j.s.Outside {
	case OutsideNone:
		j.refuse(rankSetting, "outside-none", d+" is outside the run folder, and this run has no access outside it; change Outside access in the run's settings to let it work there.")
		return
	case OutsideReadWrite:
	default:
		j.refuse(rankSetting, "outside-read-only", d+" is outside the run folder, where this run may only read; set Outside access to Read and write to let it change files there.")
		return
	}
	if j.mode() == ModeUnattended && (within(p, j.s.Home) || within(p, j.s.Workspace)) {
		j.follows("changing "+d, "")
		return
	}
	folder := filepath.Dir(p)
	j.t.Folders = appendUnique(j.t.Folders, folder)
	j.ask("outside-write", d+" is outside the run folder; allow changes in `"+j.display(folder)+"` for the rest of this run, or decline.", "")
}

// hookFile is a file in the run folder that runs programs later: git hooks and config, the
// agents' project settings.
func hookFile(p, folder string) bool {
	rel := strings.TrimPrefix(p[len(folder):], "/")
	for _, h := range []string{".git/hooks", ".git/config", ".claude/settings.json", ".claude/settings.local.json", ".codex/config.toml", ".gemini/settings.json", ".cursor/mcp.json", ".mcp.json", ".envrc", ".husky", ".vscode/tasks.json"} {
		if within(rel, h) {
			return true
		}
	}
	// A repository nested in the folder runs its own hooks and config at git's next command there.
	for _, h := range []string{"/.git/hooks", "/.git/config", "/.git/config.worktree"} {
		if i := strings.Index("/"+rel, h); i >= 0 && (len("/"+rel) == i+len(h) || ("/" + rel)[i+len(h)] == '/') {
			return true
		}
	}
	return false
}

// files judges Read, Search and Edit calls by their paths.
func (j *judgement) files(call Call, write bool) {
	if len(call.Paths) == 0 {
		if write {
			j.ask("no-path", "Ensemble cannot tell which file this change is for, so it waits for your answer.", "")
			return
		}
		call.Paths = []string{j.s.Folder}
	}
	for _, raw := range call.Paths {
		p := raw
		if strings.HasPrefix(p, "~") && j.s.Home != "" && (len(p) == 1 || p[1] == '/') {
			p = j.s.Home + p[1:]
		}
		p = resolve(j.s.Folder, p)
		if strings.ContainsAny(p, "*?[") {
			p = globRoot(p)
		}
		j.judgePath(p, write, false, false)
	}
	if write {
		j.kept = j.s.Kept.Edits
		j.follows("this change", "")
	}
}

func (j *judgement) fetch(call Call) {
	host := urlHost(call.URL)
	if host == "" {
		j.ask("fetch-url", "Ensemble cannot read the address `"+call.URL+"`, so it waits for your answer.", "")
		return
	}
	j.t.Hosts = appendUnique(j.t.Hosts, host)
	if !strings.HasPrefix(call.URL, "http://") && !strings.HasPrefix(call.URL, "https://") {
		j.ask("fetch-scheme", "`"+call.URL+"` is not a web address, so it waits for your answer.", "")
		return
	}
	if !j.s.Internet {
		j.refuse(rankSetting, "internet-off", "This run has the internet off, so it may not fetch `"+host+"`; turn the internet on in the run's settings to let it.")
		return
	}
	for _, s := range j.s.Kept.Sites {
		if s == host || strings.HasSuffix(host, "."+s) {
			j.quiet = false
			j.kept = true
			return
		}
	}
	j.follows("fetching `"+host+"`", "fetch "+host)
}

func (j *judgement) webSearch() {
	if !j.s.Internet {
		j.refuse(rankSetting, "internet-off", "This run has the internet off, so it may not search the web; turn the internet on in the run's settings to let it.")
		return
	}
	j.follows("searching the web", "")
}

// OwnServer is the name of a run's own MCP server (engines.OwnServer): only its tools are
// Ensemble's own. A server of the person's named "ensemble" (`ensemble mcp setup`) is one of theirs.
const OwnServer = "ensemble_run"

// ownTools are Ensemble's own MCP tools, which pass without asking (ENSEMBLE_OWN_TOOLS).
var ownTools = set("ask_person", "report_result", "attach_evidence", "ensemble_context", "secret_http",
	"ensemble_list_tasks", "ensemble_create_task", "ensemble_search")

func (j *judgement) mcp(call Call) {
	name := call.Server + "/" + call.Name
	j.t.Programs = appendUnique(j.t.Programs, name)
	if call.Server == OwnServer && hasKey(ownTools, call.Name) {
		return
	}
	group := ""
	switch {
	case strings.HasPrefix(call.Name, "browser_"):
		group = "browser"
	case strings.HasPrefix(call.Name, "capture_"):
		group = "capture"
	}
	for _, k := range j.s.Kept.Tools {
		if k == name || k == call.Server+"/*" || group != "" && k == group {
			j.quiet = false
			j.kept = true
			return
		}
	}
	j.follows("the tool `"+name+"`", name)
}

// verdict turns the findings into one decision.
func (j *judgement) verdict(call Call) Verdict {
	if len(j.refusals) > 0 {
		best := j.refusals[0]
		for _, f := range j.refusals[1:] {
			if f.rank < best.rank {
				best = f
			}
		}
		return Verdict{Decision: Refuse, Rule: best.rule, Reason: best.reason, Touches: j.t}
	}
	if j.clone != nil {
		reason := "Ensemble clones `" + j.clone.URL + "` into `" + j.display(j.clone.Dir) + "` itself, so the clone's git config and hooks stay read-only; it is there once this answer arrives."
		if j.clone.Rest {
			reason += " Run the rest of the command again after it."
		}
		return Verdict{Decision: Refuse, Rule: "clone", Reason: reason, Touches: j.t, Clone: j.clone}
	}
	for _, a := range j.asks {
		if a.kind != "" && contains(j.s.Kept.Commands, a.kind) {
			continue
		}
		return Verdict{Decision: Ask, Rule: a.rule, Reason: a.reason, Touches: j.t}
	}
	v := Verdict{Decision: Allow, Rule: "quiet", Touches: j.t}
	if !j.quiet {
		v.Rule = "mode"
		if j.mode() == ModeAsk && !j.s.Trusted && !j.kept && !j.keptKinds() {
			what := j.modeWhat
			if what == "" {
				what = "this call"
			}
			return Verdict{Decision: Ask, Rule: "mode", Reason: "In Ask mode this waits for your answer: " + what + ".", Touches: j.t}
		}
		if j.kept || j.keptKinds() {
			v.Rule = "kept"
		}
	}
	if call.Unsandboxed {
		// The model cannot turn the sandbox off by itself, in any mode: only the person can.
		return Verdict{Decision: Ask, Rule: "unsandboxed", Reason: "This command asks to run outside the sandbox, with nothing to confine what it does, which only you can allow.", Touches: j.t}
	}
	return v
}

func (j *judgement) keptKinds() bool {
	if len(j.modeKind) == 0 || len(j.s.Kept.Commands) == 0 {
		return false
	}
	for _, k := range j.modeKind {
		if !contains(j.s.Kept.Commands, k) {
			return false
		}
	}
	return true
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
