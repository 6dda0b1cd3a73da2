package judge

import (
	"path/filepath"
	"strings"
)

// shell judges a command line.
func (j *judgement) shell(call Call) {
	cwd := call.Cwd
	switch {
	case cwd == "":
		cwd = j.s.Folder
	case strings.HasPrefix(cwd, "~") && j.s.Home != "":
		cwd = filepath.Join(j.s.Home, cwd[1:])
	case !filepath.IsAbs(cwd):
		cwd = filepath.Join(j.s.Folder, cwd)
	default:
		cwd = filepath.Clean(cwd)
	}
	r := readLine(j.s, call.Command, cwd)
	if r.line.fork {
		j.refuse(rankFloor, "floor.fork", "This command "+whyFork+whyOwn)
	}
	if r.line.downloadExec {
		j.refuse(rankFloor, "floor.curl-sh", "This command "+whyCurlSh)
	}
	for _, p := range r.line.problems {
		if p == "dangerous" {
			j.refuse(rankFloor, "floor.unreadable", "Ensemble cannot read this command as a shell would, and it looks like one of the dangerous commands a run may never start; write it out plainly.")
			continue
		}
		j.ask("unreadable", "Ensemble cannot read this command as a shell would: "+p+", so it waits for your answer.", "")
	}
	if r.line.subst || r.line.vars || r.line.brace || r.line.assigns || r.line.funcs || r.line.aliases {
		j.follows(lineWhy(r), "")
	}
	if !within(cwd, j.s.Folder) {
		j.follows("it runs in `"+j.display(cwd)+"`, outside the run folder", "")
	}
	for _, c := range r.cmds {
		j.command(c)
	}
	j.cloneRule(r)
	if len(r.cmds) == 0 && len(r.line.problems) == 0 {
		j.t.Programs = nil
	}
}

func lineWhy(r *reader) string {
	switch {
	case r.line.subst:
		return "the command runs other commands inside $(…) or backticks"
	case r.line.vars:
		return "the command uses variables"
	case r.line.brace:
		return "the command uses brace lists"
	case r.line.assigns:
		return "the command sets variables"
	case r.line.aliases:
		return "the command defines aliases"
	}
	return "the command defines functions"
}

// command judges one simple command.
func (j *judgement) command(c *command) {
	src := "`" + c.source() + "`"
	for _, w := range c.wrappers {
		j.t.Programs = appendUnique(j.t.Programs, w)
	}
	if c.prog != "" {
		j.t.Programs = appendUnique(j.t.Programs, c.prog)
	}
	if c.progUnknown {
		j.ask("unknown-program", "Ensemble cannot tell which program "+src+" runs until it runs, so it waits for your answer.", "")
	}
	if hit, ok := j.floor(c); ok {
		j.refuse(rankFloor, hit.rule, src+" "+hit.why+whyOwn)
	}
	j.never(c, src)
	quiet := j.quietCommand(c)
	kind := CommandKindOf(c)
	if !quiet {
		j.follows(src, kind)
		if kind != "" {
			j.t.Kinds = appendUnique(j.t.Kinds, kind)
		}
	}
	acc, hosts := accesses(c)
	for _, h := range hosts {
		if h != "" {
			j.t.Hosts = appendUnique(j.t.Hosts, h)
		}
	}
	j.network(c, src, hosts, kind)
	if c.prog == "git" {
		acc = append(acc, j.git(c, src)...)
	} else if c.prog == "gh" {
		j.gh(c, src)
	}
	unknownDelete := false
	for _, a := range acc {
		cwd := c.cwd
		if a.cwd != "" {
			cwd = a.cwd
		}
		if a.w.val == "" && a.w.known {
			continue
		}
		p, ok := j.pathOf(cwd, a.w)
		if !ok {
			if a.write {
				unknownDelete = unknownDelete || c.prog == "rm" || c.prog == "find"
				if !j.s.Sandbox {
					j.ask("unknown-path", src+" changes a place Ensemble cannot tell before it runs, and the sandbox is off, so it waits for your answer.", "")
				}
			}
			continue
		}
		if a.w.glob || !a.w.known {
			root := p
			if a.w.glob {
				root = globRoot(p)
			}
			if j.s.Glob != nil && a.w.known && a.w.glob {
				if matches, err := j.s.Glob(p); err == nil {
					for _, m := range matches {
						j.judgePath(filepath.Clean(m), a.write, c.admin)
					}
					j.judgePath(root, a.write, c.admin)
					continue
				}
			}
			if !a.write && j.mayHoldSecrets(root) {
				j.ask("glob-secrets", src+" names files by a pattern in `"+j.display(root)+"`, which may match keys or sign-ins, so it waits for your answer.", "")
			}
			j.judgePath(root, a.write, c.admin)
			continue
		}
		j.judgePath(p, a.write, c.admin)
	}
	j.removesProtected(c, src)
	if c.extraArgs && (c.prog == "rm" && hasFlag(c.args, "rR", "recursive") || c.prog == "shred") {
		unknownDelete = true
	}
	if unknownDelete && (c.prog == "rm" && hasFlag(c.args, "rR", "recursive") || c.prog == "find" || c.prog == "shred") {
		j.ask("unknown-delete", src+" deletes things Ensemble cannot see before it runs, so it waits for your answer.", "")
	}
	// A program that changes things, run outside the folder, changes that folder.
	if c.prog != "" && !readsOnly(c.prog) && !hasKey(noPathPrograms, c.prog) && c.cwd != "" && !within(c.cwd, j.s.Folder) && c.prog != "git" {
		j.judgePath(c.cwd, true, c.admin)
	}
	if c.cwd == "" && c.prog != "" && !hasKey(noPathPrograms, c.prog) && !readsOnly(c.prog) {
		j.follows(src+" runs where an earlier cd went, which Ensemble cannot tell", "")
		if !j.s.Sandbox {
			j.ask("unknown-cwd", src+" runs in a folder Ensemble cannot tell before it runs, and the sandbox is off, so it waits for your answer.", "")
		}
	}
}

// mayHoldSecrets reports a folder a pattern could reach keys in: one holding the home folder,
// the home folder itself, /etc, or another account's.
func (j *judgement) mayHoldSecrets(root string) bool {
	if within(j.s.Folder, root) && root != j.s.Folder && !within(j.s.Home, root) {
		return false
	}
	if within(root, j.s.Folder) {
		return false
	}
	return within(j.s.Home, root) || within(root, "/etc") || within(j.s.DataDir, root) || root == "/home" || root == "/Users"
}

// never refuses privilege, persistence, keychain and machine-control programs.
func (j *judgement) never(c *command, src string) {
	progs := append(append([]string(nil), c.wrappers...), c.prog)
	for i, p := range progs {
		why, ok := neverPrograms[p]
		if !ok {
			continue
		}
		if i == len(progs)-1 {
			if verbs, ok := neverReadVerbs[p]; ok && len(c.args) > 1 {
				v := c.args[1].val
				if p == "systemctl" || p == "loginctl" {
					v = c.args[skipOpts(c.args, "HMtpnos", "host", "machine", "type", "property", "lines", "output", "state")].val
				}
				if contains(verbs, v) {
					continue
				}
			}
		}
		j.refuse(rankNever, "never", "`"+p+"` "+why+", which a run may never do.")
		return
	}
	if why, ok := settingsWrite(c); ok {
		j.refuse(rankNever, "never", src+" "+why+", which a run may never do.")
	}
}

// network applies the internet setting and the remote-program rule.
func (j *judgement) network(c *command, src string, hosts []string, kind string) {
	switch {
	case hasKey(remotePrograms, c.prog) && (c.prog != "rsync" || len(hosts) > 0):
		if !j.s.Internet {
			j.refuse(rankSetting, "internet-off", "`"+c.prog+"` reaches another computer, and this run has the internet off; turn the internet on in the run's settings to let it.")
			return
		}
		if j.mode() != ModeUnattended {
			j.ask("remote", "`"+c.prog+"` reaches another computer, which waits for your answer in Ask and Review only.", kind)
		}
	case hasKey(webPrograms, c.prog):
		if j.s.Internet {
			return
		}
		if len(hosts) == 0 {
			j.ask("internet-off", src+" may reach the internet, which this run has off, and Ensemble cannot tell where it goes.", "")
			return
		}
		for _, h := range hosts {
			if !isLoopbackURL(h) {
				j.refuse(rankSetting, "internet-off", "This run has the internet off, so "+src+" may not reach `"+h+"`; turn the internet on in the run's settings to let it.")
				return
			}
		}
	}
}

// quietCommand reports a command that only reads inside the folder (quietCommand, quietArgs).
func (j *judgement) quietCommand(c *command) bool {
	if c.prog == "" {
		for _, r := range c.redirs {
			if isWriteRedir(r.op) && !(r.target.known && classify(resolve(c.cwd, r.target.val), j.s) == zDevice) {
				return false
			}
		}
		return !c.progUnknown
	}
	if c.progUnknown || c.nested || c.admin || len(c.wrappers) > 0 || c.assigns || c.fn || c.extraArgs || c.code || c.stdinScript {
		return false
	}
	bad, ok := quietPrograms[c.prog]
	if !ok {
		return false
	}
	if c.cwd == "" || !within(c.cwd, j.s.Folder) {
		return false
	}
	for _, b := range bad {
		if strings.HasPrefix(b, "--") {
			if hasFlag(c.args, "", b[2:]) {
				return false
			}
		} else if hasFlag(c.args, b[1:], "") {
			return false
		}
	}
	if c.prog == "find" && (c.findDelete || c.findExec || c.findFollow) {
		return false
	}
	if c.prog == "find" {
		for _, a := range c.args {
			if strings.HasPrefix(a.val, "-fprint") || a.val == "-fls" {
				return false
			}
		}
	}
	if c.prog == "git" && !j.quietGit(c) {
		return false
	}
	acc, _ := accesses(c)
	if c.prog == "git" {
		acc = append(acc, gitPaths(c)...)
	}
	for _, a := range acc {
		if a.write {
			if a.w.known && classify(resolve(c.cwd, a.w.val), j.s) == zDevice {
				continue
			}
			return false
		}
		p, ok := j.pathOf(c.cwd, a.w)
		if !ok || !a.w.known {
			return false
		}
		if a.w.glob {
			if j.s.Glob == nil {
				p = globRoot(p)
			} else if ms, err := j.s.Glob(p); err == nil {
				for _, m := range ms {
					if z, _ := j.zoneOf(filepath.Clean(m)); z != zInside || secretName(m) {
						return false
					}
				}
				p = globRoot(p)
			}
		}
		z, _ := j.zoneOf(p)
		if z == zDevice || z == zSkill {
			continue
		}
		if z != zInside || secretName(p) {
			return false
		}
	}
	return true
}
