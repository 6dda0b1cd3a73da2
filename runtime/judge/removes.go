package judge

import "path/filepath"

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
		if j.s.Resolve != nil {
			if rp, err := j.s.Resolve(p); err == nil && filepath.IsAbs(rp) {
				p = filepath.Clean(rp)
			}
		}
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
