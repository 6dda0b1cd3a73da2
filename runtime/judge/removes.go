package judge

import (
	"path/filepath"
	"strings"
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
	if j.s.Home != "" {
		for _, s := range homeSecrets {
			if p := filepath.Join(j.s.Home, s); below(p) {
				return p, "secret", "which holds keys, sign-ins or browser data that a run may never read or change.", rankZone
			}
		}
		for _, s := range homeStartup {
			if p := filepath.Join(j.s.Home, s); below(p) {
				return p, "startup", "which runs each time you open a shell, sign in or start a tool, so a run may not change it.", rankZoneWrite
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
				out = append(out, ac.w)
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
	}
	return nil
}

// readsProtected refuses reading a whole folder that holds keys, sign-ins or Ensemble's data:
// grep -r x ~ reads ~/.ssh with the rest.
func (j *judgement) readsProtected(c *command, src string) {
	for _, w := range recursiveReads(c) {
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

// pipeDeletes refuses a pipeline that deletes what a search of a critical folder finds:
// find ~ | xargs rm -rf.
func (j *judgement) pipeDeletes(r *reader) {
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
					known = true
				}
			}
		}
		if !known {
			c.xargsUnknown = true
		}
	}
}
