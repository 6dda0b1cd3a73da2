package judge

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// removedWhole are the paths c deletes or moves away with everything in them: the operands of
// rm -r and rmdir, find's starting points when it deletes what it finds, mv's sources.
func removedWhole(c *command) []word {
	switch {
	case (c.prog == "rm" || c.prog == "grm") && hasFlag(c.args, "rR", "recursive"), c.prog == "rmdir":
		return operands(c)
	case c.prog == "find" && c.findDelete:
		var out []word
		for _, a := range findAccess(c) {
			if a.write {
				out = append(out, a.w)
			}
		}
		return out
	case isTar(c.prog) && hasFlag(c.args, "", "remove-files"):
		return operands(c)
	case c.prog == "rsync" && rsyncDeletes(c.args):
		if ops := operands(c); len(ops) > 0 {
			return ops[len(ops)-1:]
		}
	case c.prog == "mv":
		ops := operands(c)
		if hasFlag(c.args, "t", "target-directory") {
			return ops
		}
		if len(ops) > 1 {
			return ops[:len(ops)-1]
		}
	}
	return nil
}

// removesProtected refuses deleting or moving a folder that holds what a run may never change:
// Ensemble's own data and helpers, keys and sign-ins, start-up files, Ensemble's code. Judging the
// folder alone would let `rm -rf ~/.local` take Ensemble's data with it.
func (j *judgement) removesProtected(c *command, src string) {
	for _, w := range removedWhole(c) {
		p, ok := j.pathOf(c.cwd, w)
		if !ok {
			continue
		}
		if w.glob || !w.known {
			p = globRoot(p)
		}
		p = j.real(p)
		if hit, rule, why, rank := j.protectedBelow(p); hit != "" {
			j.refuse(rank, rule, src+" would also remove `"+j.display(hit)+"`, "+why)
			return
		}
	}
}

// protectedBelow is the first protected place strictly inside dir, with the rule and reason of
// its refusal.
func (j *judgement) protectedBelow(dir string) (hit, rule, why string, rank int) {
	below := func(p string) bool { return p != "" && p != dir && within(p, dir) }
	for _, d := range append([]string{j.s.DataDir}, j.s.Protected...) {
		if below(d) {
			return d, "data", "Ensemble's own data, which a run may never read or change.", rankZone
		}
	}
	if h := j.s.Home; h != "" && (within(h, dir) || within(dir, h)) {
		// Only places under the home folder are left: compare them relative to it.
		rel := ""
		if len(dir) > len(h) {
			rel = dir[len(h)+1:]
		}
		under := func(s string) bool { return rel == "" || s != rel && within(s, rel) }
		for _, s := range homeSecrets {
			if under(s) {
				return h + "/" + s, "secret", "which holds keys, sign-ins or browser data that a run may never read or change.", rankZone
			}
		}
		for _, s := range homeStartup {
			if under(s) {
				return h + "/" + s, "startup", "which runs each time you open a shell, sign in or start a tool, so a run may not change it.", rankZoneWrite
			}
		}
	}
	for _, d := range j.s.CodeDirs {
		if below(d) {
			return d, "code", "Ensemble's own code, which a run may not change.", rankZoneWrite
		}
	}
	return "", "", "", 0
}

// recursiveReads are the paths c reads with everything in them: a search, an archive or a copy
// of a whole folder takes the keys in it along.
func recursiveReads(c *command) []word {
	a := c.args
	ops := operands(c)
	switch c.prog {
	case "grep", "egrep", "fgrep", "ggrep":
		pa := c.opts()
		if pa == nil {
			return nil
		}
		rec := pa.has("-r", "-R", "--recursive", "--dereference-recursive")
		if d, ok := pa.value("-d", "--directories"); ok && d.val == "recurse" {
			rec = true
		}
		if !rec {
			return nil
		}
		if !pa.pattern && len(ops) > 0 {
			ops = ops[1:]
		}
		if len(ops) == 0 {
			return []word{lit(".")}
		}
		return ops
	case "rg", "ag", "ack", "pt", "ugrep":
		pa := c.opts()
		if pa != nil && !pa.pattern && len(ops) > 0 || pa == nil && len(ops) > 0 {
			ops = ops[1:]
		}
		if len(ops) == 0 {
			return []word{lit(".")}
		}
		return ops
	case "tar", "gtar", "bsdtar":
		var out []word
		for _, ac := range tarAccess(c, ops) {
			if !ac.write && ac.kind != "archive" {
				w := ac.w
				if ac.cwd != "" && w.known {
					w = lit(resolve(ac.cwd, w.val)) // in the folder -C moved to
				}
				out = append(out, w)
			}
		}
		return out
	case "zip":
		if hasFlag(a, "rR", "recurse-paths") && len(ops) > 1 {
			return ops[1:]
		}
	case "7z", "7za", "7zz", "7zr":
		if len(ops) > 2 && (ops[0].val == "a" || ops[0].val == "u") {
			return ops[2:]
		}
	case "cp", "gcp", "scp", "rsync":
		if c.prog == "rsync" && !hasFlag(a, "ra", "recursive", "archive") || c.prog != "rsync" && !hasFlag(a, "rRa", "recursive", "archive") {
			return nil
		}
		if _, ok := optValue(a, 't', "target-directory"); ok {
			return ops
		}
		if len(ops) > 1 {
			return ops[:len(ops)-1]
		}
	case "diff", "gdiff":
		if hasFlag(a, "r", "recursive") {
			return ops
		}
	case "find":
		// find ~ -exec cat {} +: what it runs reads every file it finds.
		if c.findExec && !c.findDelete {
			var out []word
			for _, ac := range findAccess(c) {
				out = append(out, ac.w)
			}
			return out
		}
	case "fd", "fdfind":
		if pa := c.opts(); pa != nil && len(pa.rest) > 0 {
			if len(pa.ops) > 1 {
				return pa.ops[1:]
			}
			return []word{lit(".")}
		}
	case "python", "python3":
		// python3 -m http.server [-d DIR]: serves a folder's every file.
		for i := 1; i+1 < len(a); i++ {
			if a[i].val == "-m" && a[i+1].val == "http.server" {
				if d, ok := optValue(a[i+1:], 'd', "directory"); ok {
					return []word{d}
				}
				return []word{lit(".")}
			}
		}
	case "docker", "podman", "nerdctl":
		var out []word
		for _, v := range volumes(a) {
			out = append(out, v.w)
		}
		return out
	}
	return nil
}

// volumes are the folders of this computer docker run -v and --mount give a container.
func volumes(a []word) []access {
	var out []access
	for i := 1; i < len(a); i++ {
		v := a[i].val
		val := ""
		switch {
		case (v == "-v" || v == "--volume" || v == "--mount") && i+1 < len(a):
			i++
			val = a[i].val
		case strings.HasPrefix(v, "--volume=") || strings.HasPrefix(v, "--mount="):
			_, val, _ = strings.Cut(v, "=")
		case strings.HasPrefix(v, "-v") && len(v) > 2:
			val = v[2:]
		default:
			continue
		}
		host, ro := val, false
		if strings.Contains(val, "source=") || strings.Contains(val, "src=") {
			host = ""
			for _, kv := range strings.Split(val, ",") {
				k, x, _ := strings.Cut(kv, "=")
				switch k {
				case "source", "src":
					host = x
				case "readonly", "ro":
					ro = x == "" || x == "true" || x == "1"
				}
				if kv == "readonly" || kv == "ro" {
					ro = true
				}
			}
		} else {
			parts := strings.Split(val, ":")
			host = parts[0]
			ro = len(parts) > 2 && strings.Contains(parts[len(parts)-1], "ro")
		}
		if host == "" || !strings.HasPrefix(host, "/") && !strings.HasPrefix(host, ".") && !strings.HasPrefix(host, "~") && !strings.Contains(host, unknown) {
			continue // a named volume
		}
		w := a[i]
		w.val = host
		w.known = !strings.Contains(host, unknown)
		out = append(out, access{w: w, write: !ro})
	}
	return out
}

// readsProtected refuses reading a whole folder that holds keys, sign-ins or Ensemble's data:
// grep -r x ~ reads ~/.ssh with the rest.
func (j *judgement) readsProtected(c *command, src string) {
	reads := recursiveReads(c)
	if c.prog != "" && !hasKey(noPathPrograms, c.prog) && !findDeleters[c.prog] {
		reads = append(reads, c.feedRoots...)
	}
	for _, w := range reads {
		p, ok := j.pathOf(c.cwd, w)
		if !ok {
			continue
		}
		if w.glob || !w.known {
			p = globRoot(p)
		}
		p = j.real(p)
		if hit, rule, why, rank := j.protectedBelow(p); hit != "" && (rule == "data" || rule == "secret") {
			j.refuse(rank, rule, src+" would also read `"+j.display(hit)+"`, "+why+" Name a folder inside that holds none.")
			return
		}
	}
}

// extractDest is the folder c writes names into that the judge cannot see: an archive extracted, a
// folder's contents copied.
func extractDest(c *command) (word, bool) {
	a := c.args
	ops := operands(c)
	switch c.prog {
	case "tar", "gtar", "bsdtar":
		for _, ac := range tarAccess(c, ops) {
			if ac.write && ac.kind == "extract" {
				return ac.w, true
			}
		}
	case "unzip":
		if d, ok := optValue(a, 'd', ""); ok {
			return d, true
		}
		return lit("."), true
	case "cpio":
		if hasFlag(a, "i", "extract") {
			return lit("."), true
		}
	case "rsync", "cp", "gcp", "mv":
		if len(ops) < 2 {
			return word{}, false
		}
		for _, src := range ops[:len(ops)-1] {
			// a folder's contents (src/, src/., src/*): names the judge cannot see.
			if src.glob || strings.HasSuffix(src.val, "/") || strings.HasSuffix(src.val, "/.") {
				return ops[len(ops)-1], true
			}
		}
	}
	return word{}, false
}

// extractsInto asks before names the judge cannot see land in a folder that holds start-up files,
// keys or Ensemble's data: an archive unpacked into the home folder can replace ~/.bashrc.
func (j *judgement) extractsInto(c *command, src string) {
	w, ok := extractDest(c)
	if !ok {
		return
	}
	p, ok := j.pathOf(c.cwd, w)
	if !ok || within(p, j.s.Folder) && !within(j.s.Home, p) {
		return
	}
	p = j.real(p)
	hit, _, _, _ := j.protectedBelow(p)
	if hit == "" && p != j.s.Home {
		return
	}
	if hit == "" {
		hit = p
	}
	j.ask("write-protected-folder", src+" puts files Ensemble cannot see before it runs into `"+j.display(p)+"`, which holds `"+j.display(hit)+"`, so it waits for your answer.", "")
}

// pipeDeletes refuses a pipeline that deletes what a search of a critical folder finds
// (find ~ | xargs rm -rf), and one that starts programs without end: yes | xargs -P0 ….
func (j *judgement) pipeDeletes(r *reader) {
	for _, c := range r.cmds {
		if c.pipe != 0 && c.xargsProcs0 {
			for _, f := range r.cmds {
				if f.pipe == c.pipe && f.stage < c.stage && f.prog == "yes" {
					j.refuse(rankFloor, "floor.fork", "`"+c.source()+"` "+whyFork+whyOwn)
					return
				}
			}
		}
	}
	for _, c := range r.cmds {
		if c.pipe == 0 || !c.extraArgs || !findDeleters[c.prog] || !contains(c.wrappers, "xargs") && !contains(c.wrappers, "gxargs") {
			continue
		}
		for _, f := range r.cmds {
			if f.pipe != c.pipe || f.stage >= c.stage {
				continue
			}
			var starts []word
			switch f.prog {
			case "find":
				for _, ac := range findAccess(f) {
					starts = append(starts, ac.w)
				}
			case "fd", "fdfind":
				if pa := f.opts(); pa != nil && len(pa.ops) > 1 {
					starts = pa.ops[1:]
				}
			case "ls", "du", "tree":
				starts = operands(f)
			}
			for _, w := range starts {
				if _, ok := j.criticalWord(f, w); ok {
					j.refuse(rankFloor, "floor.rm", "`"+c.source()+"` "+whyDelete+whyOwn)
					return
				}
			}
		}
	}
}

// listers print names found under starting points the judge judges with them.
var listers = set("find", "fd", "fdfind", "ls", "tree", "git", "rg", "grep", "egrep", "fgrep", "locate", "du")

// xargsFeeds gives xargs' commands the names fed to them: an echo or printf of known words is
// read as those names; a search's results lie under the places it searched; anything else is
// unknown (xargsUnknown).
func xargsFeeds(r *reader) {
	for _, c := range r.cmds {
		if !contains(c.wrappers, "xargs") && !contains(c.wrappers, "gxargs") {
			continue
		}
		known := false
		if c.pipe != 0 && c.stage > 0 && len(c.extra) == 0 {
			for _, f := range r.cmds {
				if f.pipe != c.pipe || f.stage != c.stage-1 {
					continue
				}
				switch {
				case (f.prog == "echo" || f.prog == "printf") && len(f.wrappers) == 0:
					if text, ok := echoText(f); ok {
						for _, name := range strings.Fields(text) {
							c.extra = append(c.extra, access{w: lit(name), write: findDeleters[c.prog]})
						}
						known = true
					}
				case hasKey(listers, f.prog):
					// The names lie under what it searched: its roots are read with them.
					known = true
					roots := operands(f)
					if f.prog == "find" {
						roots = nil
						for _, ac := range findAccess(f) {
							roots = append(roots, ac.w)
						}
					}
					for _, w := range roots {
						if p := resolve(f.cwd, w.val); p != "" && w.known {
							c.feedRoots = append(c.feedRoots, lit(p))
						}
					}
				}
			}
		}
		if !known {
			c.xargsUnknown = true
		}
	}
}

// filters pass on some of the lines they read, unchanged.
var filters = set("head", "tail", "sort", "uniq", "grep", "egrep", "fgrep", "rg", "tac", "shuf")

// listedRoots are the folders the names cmds print lie under, when cmds are one search (find, fd,
// ls, git ls-files, grep -l) with only filters after it; ok is false otherwise.
func listedRoots(cmds []*command) ([]string, bool) {
	if len(cmds) == 0 {
		return nil, false
	}
	var roots []string
	add := func(cwd string, ws []word) bool {
		for _, w := range ws {
			if !w.known {
				return false
			}
			p := resolve(cwd, w.val)
			if p == "" {
				return false
			}
			if w.glob {
				p = globRoot(p)
			}
			roots = append(roots, p)
		}
		return true
	}
	for i, c := range cmds {
		if c.progUnknown || len(c.wrappers) > 0 || c.cwd == "" || c.subLevel != cmds[0].subLevel {
			return nil, false
		}
		for _, rd := range c.redirs {
			if !(rd.target.known && (rd.target.val == "/dev/null" || rd.op == syntax.DplOut)) {
				return nil, false
			}
		}
		if i > 0 {
			if c.pipe == 0 || c.pipe != cmds[0].pipe || !hasKey(filters, c.prog) {
				return nil, false
			}
			ops := operands(c)
			if _, pat := patternFirst[c.prog]; pat && len(ops) > 0 {
				ops = ops[1:]
			}
			if len(ops) > 0 {
				return nil, false
			}
			continue
		}
		roots = append(roots, c.cwd)
		switch c.prog {
		case "find":
			if c.findExec || c.findDelete || c.findFollow {
				return nil, false
			}
			var starts []word
			for _, ac := range findAccess(c) {
				starts = append(starts, ac.w)
			}
			if !add(c.cwd, starts) {
				return nil, false
			}
		case "fd", "fdfind":
			pa := c.opts()
			if pa == nil || len(pa.rest) > 0 || pa.has("-L", "--follow") {
				return nil, false
			}
			if len(pa.ops) > 1 && !add(c.cwd, pa.ops[1:]) {
				return nil, false
			}
		case "ls":
			if !add(c.cwd, operands(c)) {
				return nil, false
			}
		case "git":
			g := parseGit(c)
			if g.pre || g.sub != "ls-files" && g.sub != "diff" && g.sub != "ls-tree" {
				return nil, false
			}
		case "grep", "egrep", "fgrep", "rg":
			if !hasFlag(c.args, "lL", "files-with-matches", "files-without-match", "files") {
				return nil, false
			}
			ops := operands(c)
			if pa := c.opts(); pa != nil && !pa.pattern && len(ops) > 0 && !pa.has("--files") {
				ops = ops[1:]
			}
			if !add(c.cwd, ops) {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return roots, true
}
