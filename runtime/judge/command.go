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
	cwd = j.resolved(cwd) // as the folder is: where its links lead
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
	j.links, j.copies = r.links, r.copies
	xargsFeeds(r)
	for _, c := range r.cmds {
		j.command(c)
	}
	j.pipeDeletes(r)
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
	j.ownRuntime(c, src)
	j.traces(c, src)
	for _, code := range c.inline {
		if forksInCode(code.val) {
			j.refuse(rankFloor, "floor.fork", src+" "+whyFork+whyOwn)
		}
	}
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
	acc = append(acc, j.inlinePaths(c)...)
	for _, why := range c.opaque {
		j.ask("unreadable-code", src+" runs code Ensemble cannot read ("+why+"), so it waits for your answer.", "")
	}
	if c.listed {
		j.ask("unknown-read", src+" reads the names of the files it reads from a file, which Ensemble cannot see before it runs, so it waits for your answer.", "")
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
		if a.w.proc && !a.w.known && strings.Trim(a.w.val, unknown) == "" {
			continue // <(…) is a pipe, not a file; the commands in it are judged themselves
		}
		if len(a.w.foundIn) > 0 {
			// $(find ~ -name x): names under what the search searched.
			for _, root := range a.w.foundIn {
				j.judgePath(root, false, c.admin, a.mention)
				if hit, rule, why, rank := j.protectedBelow(j.real(root)); hit != "" && (rule == "data" || rule == "secret") {
					j.refuse(rank, rule, src+" would also read `"+j.display(hit)+"`, "+why+" Name a folder inside that holds none.")
				}
			}
			if a.write && !j.s.Sandbox {
				j.ask("unknown-path", src+" changes a place Ensemble cannot tell before it runs, and the sandbox is off, so it waits for your answer.", "")
			}
			continue
		}
		if !a.w.known && j.procPattern(resolve(cwd, a.w.val)) {
			j.refuse(rankZone, "other-process", src+" "+whyProc)
			continue
		}
		p, ok := j.pathOf(cwd, a.w)
		if !ok {
			if a.write {
				unknownDelete = unknownDelete || c.prog == "rm" || c.prog == "find"
				if !j.s.Sandbox {
					j.ask("unknown-path", src+" changes a place Ensemble cannot tell before it runs, and the sandbox is off, so it waits for your answer.", "")
				}
			} else if !a.mention && !a.w.found {
				j.ask("unknown-read", src+" reads a file Ensemble cannot tell before it runs, which could be one with keys or sign-ins, so it waits for your answer.", "")
			}
			continue
		}
		if !a.w.known && a.w.computed && !a.write && !a.mention && !a.w.found {
			// The unknown part may hold .. or a whole path of its own.
			j.ask("unknown-read", src+" reads a file whose name it makes as it runs, which could be one with keys or sign-ins, so it waits for your answer.", "")
		}
		if a.w.glob || !a.w.known {
			root := p
			if a.w.glob {
				root = globRoot(p)
				if j.procPattern(p) {
					j.refuse(rankZone, "other-process", src+" "+whyProc)
					continue
				}
			}
			if j.s.Glob != nil && a.w.known && a.w.glob {
				if matches, err := j.s.Glob(p); err == nil {
					for _, m := range matches {
						j.judgePath(filepath.Clean(m), a.write, c.admin, a.mention)
					}
					j.judgePath(root, a.write, c.admin, a.mention)
					continue
				}
			}
			if !a.write && !a.mention && j.mayHoldSecrets(root) {
				j.ask("glob-secrets", src+" names files by a pattern in `"+j.display(root)+"`, which may match keys or sign-ins, so it waits for your answer.", "")
			}
			j.judgePath(root, a.write, c.admin, a.mention)
			continue
		}
		j.judgePath(p, a.write, c.admin, a.mention)
	}
	j.removesProtected(c, src)
	j.readsProtected(c, src)
	j.extractsInto(c, src)
	if c.extraArgs && (c.prog == "rm" && hasFlag(c.args, "rR", "recursive") || c.prog == "shred") {
		unknownDelete = true
	}
	if c.xargsUnknown && c.prog != "" && !hasKey(noPathPrograms, c.prog) && !findDeleters[c.prog] && !c.code {
		j.ask("unknown-read", src+" gets file names it reads only when it runs, which could be ones with keys or sign-ins, so it waits for your answer.", "")
	}
	if unknownDelete && (c.prog == "rm" && hasFlag(c.args, "rR", "recursive") || c.prog == "find" || c.prog == "shred") {
		j.ask("unknown-delete", src+" deletes things Ensemble cannot see before it runs, so it waits for your answer.", "")
	}
	// A program that changes things, run outside the folder, changes that folder.
	if c.prog != "" && !readsOnly(c.prog) && !hasKey(noPathPrograms, c.prog) && c.cwd != "" && !within(c.cwd, j.s.Folder) && c.prog != "git" {
		j.judgePath(c.cwd, true, c.admin, false)
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

// quietCommand reports a command that only reads inside the folder (quietCommand, quietArgs):
// a quiet program, with options its spec knows to read nothing more, naming only files in the
// folder.
func (j *judgement) quietCommand(c *command) bool {
	if c.prog == "" {
		if len(c.extra) > 0 {
			return false
		}
		for _, r := range c.redirs {
			if isWriteRedir(r.op) && !(r.target.known && classify(resolve(c.cwd, r.target.val), j.s) == zDevice) {
				return false
			}
		}
		return !c.progUnknown
	}
	if c.progUnknown || c.nested || c.admin || len(c.wrappers) > 0 || c.assigns || c.fn || c.extraArgs || c.code || c.stdinScript ||
		c.runs || c.listed || len(c.inline) > 0 || len(c.extra) > 0 || len(c.opaque) > 0 {
		return false
	}
	if !hasKey(quietPrograms, c.prog) {
		return false
	}
	if c.cwd == "" || !within(c.cwd, j.s.Folder) {
		return false
	}
	if !hasKey(bareQuiet, c.prog) {
		pa := c.opts()
		if pa == nil || len(pa.unknown) > 0 || pa.loud || len(pa.rest) > 0 {
			return false
		}
		for _, v := range pa.vals {
			if v.role&(rProg|rShell|rCode|rList|rWrite|rOutDir|rChdir|rRest) != 0 {
				return false
			}
		}
	}
	if c.prog == "find" && !findQuiet(c) {
		return false
	}
	if c.prog == "git" && !j.quietGit(c) {
		return false
	}
	acc, hosts := accesses(c)
	if len(hosts) > 0 {
		return false
	}
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

// findPrimaries are find's tests and actions that read nothing but names, with how many words
// each takes. -newer and friends name a file, which findAccess judges.
var findPrimaries = map[string]int{
	"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1, "-iregex": 1,
	"-type": 1, "-xtype": 1, "-size": 1, "-mtime": 1, "-mmin": 1, "-atime": 1, "-amin": 1, "-ctime": 1, "-cmin": 1,
	"-newer": 1, "-anewer": 1, "-cnewer": 1, "-samefile": 1, "-user": 1, "-group": 1, "-uid": 1, "-gid": 1,
	"-perm": 1, "-links": 1, "-inum": 1, "-maxdepth": 1, "-mindepth": 1, "-printf": 1, "-regextype": 1,
	"-fstype": 1, "-lname": 1, "-ilname": 1, "-used": 1, "-context": 1, "-newermt": 1, "-newerct": 1, "-newerat": 1,
	"-newermm": 1, "-neweraa": 1, "-newercc": 1, "-newerBt": 1,
	"-empty": 0, "-readable": 0, "-writable": 0, "-executable": 0, "-depth": 0, "-prune": 0, "-print": 0,
	"-print0": 0, "-ls": 0, "-quit": 0, "-true": 0, "-false": 0, "-not": 0, "-a": 0, "-and": 0, "-o": 0, "-or": 0,
	"-mount": 0, "-xdev": 0, "-noleaf": 0, "-daystart": 0, "-nouser": 0, "-nogroup": 0, "-d": 0, "-s": 0, "-x": 0,
	"-ignore_readdir_race": 0, "-noignore_readdir_race": 0, "-warn": 0, "-nowarn": 0, "-help": 0, "--help": 0,
	"-version": 0, "--version": 0, "-P": 0, "-E": 0, "-X": 0, "-O0": 0, "-O1": 0, "-O2": 0, "-O3": 0,
	"(": 0, ")": 0, "!": 0, ",": 0, "\\(": 0, "\\)": 0,
}

// findQuiet reports a find whose expression only tests and prints names.
func findQuiet(c *command) bool {
	if c.findDelete || c.findExec || c.findFollow {
		return false
	}
	args := c.args
	i := 1
	for i < len(args) && (args[i].val == "-P" || args[i].val == "-H" || args[i].val == "-L") {
		i++
	}
	for i < len(args) && !strings.HasPrefix(args[i].val, "-") && args[i].val != "(" && args[i].val != "!" {
		i++ // starting points
	}
	for ; i < len(args); i++ {
		n, ok := findPrimaries[args[i].val]
		if !ok {
			return false
		}
		i += n
	}
	return true
}
