package judge

import (
	"path/filepath"
	"strings"
)

// makesLinks records the symbolic links a line makes (ln -s TARGET LINK, cp -s), so a later
// command of the same line that reaches through one (ln -s ~ h && rm -rf h/) is judged by where it
// leads: Settings.Resolve can only follow links that exist before the line runs.
func (r *reader) makesLinks(cmd *command) {
	r.copiesBinary(cmd)
	symbolic := false
	switch cmd.prog {
	case "ln", "gln":
		symbolic = hasFlag(cmd.args, "s", "symbolic")
	case "cp", "gcp":
		symbolic = hasFlag(cmd.args, "s", "symbolic-link")
	}
	if !symbolic {
		return
	}
	pa := cmd.opts()
	if pa == nil || len(pa.ops) == 0 {
		return
	}
	ops := pa.ops
	cwd := cmd.cwd
	var dir string
	var targets []word
	link := ""
	if t, ok := pa.value("-t", "--target-directory"); ok {
		dir, targets = t.val, ops
	} else if len(ops) == 1 {
		dir, targets = ".", ops
	} else {
		last := ops[len(ops)-1]
		targets = ops[:len(ops)-1]
		if len(targets) > 1 || strings.HasSuffix(last.val, "/") {
			dir = last.val
		} else {
			link = last.val
			dir = last.val // if LINK is a folder already, the link goes inside it
		}
	}
	if r.links == nil {
		r.links = map[string]string{}
	}
	for _, t := range targets {
		if !t.known {
			continue
		}
		var names []string
		if link != "" {
			names = append(names, link)
		}
		if dir != "" {
			names = append(names, filepath.Join(dir, filepath.Base(t.val)))
		}
		for _, n := range names {
			l := resolve(cwd, n)
			if l == "" || strings.Contains(l, unknown) {
				continue
			}
			target := t.val
			if cmd.prog == "ln" || cmd.prog == "gln" {
				target = resolve(filepath.Dir(l), target) // a link's target is read from its own folder
			} else {
				target = resolve(cwd, target)
			}
			if target != "" {
				r.links[l] = target
			}
		}
	}
}

// throughLinks is p with the line's own links followed.
func throughLinks(p string, links map[string]string) string {
	for i := 0; i < 8 && len(links) > 0; i++ {
		changed := false
		for l, t := range links {
			if within(p, l) {
				p = filepath.Join(t, p[len(l):])
				changed = true
				break
			}
		}
		if !changed {
			break
		}
	}
	return p
}

// copiesBinary records where the line copies Ensemble's own program (cp, install, ln), so
// running the copy is running Ensemble.
func (r *reader) copiesBinary(cmd *command) {
	b := r.s.Binary
	if b == "" || cmd.cwd == "" {
		return
	}
	switch cmd.prog {
	case "cp", "gcp", "install", "ginstall", "ln", "gln", "rsync":
	default:
		return
	}
	ops := operands(cmd)
	if len(ops) < 2 {
		return
	}
	dest := ops[len(ops)-1]
	for _, src := range ops[:len(ops)-1] {
		if !src.known || !dest.known {
			continue
		}
		if resolve(cmd.cwd, src.val) == filepath.Clean(b) || filepath.Base(src.val) == filepath.Base(b) && filepath.Base(b) == "ensemble" {
			d := resolve(cmd.cwd, dest.val)
			if r.copies == nil {
				r.copies = map[string]bool{}
			}
			r.copies[d] = true
			r.copies[filepath.Join(d, filepath.Base(src.val))] = true
		}
	}
}
