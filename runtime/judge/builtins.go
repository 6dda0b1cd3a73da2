package judge

import "strings"

// builtinState follows what the shell's own commands do to the line's variables: read and its
// kin set them from input (unknown), printf -v from its text, unset empties them, and a sourced
// script may change any of them.
func (r *reader) builtinState(cmd *command, st *state) {
	a := cmd.args
	switch cmd.prog {
	case "read":
		names := 0
		for i := 1; i < len(a); i++ {
			v := a[i].val
			if strings.HasPrefix(v, "-") {
				if len(v) == 2 && strings.IndexByte("adinNptu", v[1]) >= 0 {
					if v[1] == 'a' && i+1 < len(a) {
						r.setVar(st, a[i+1].val, shVar{val: unknown, computed: true})
						names++
					}
					i++
				}
				continue
			}
			r.setVar(st, v, shVar{val: unknown, computed: true})
			names++
		}
		if names == 0 {
			r.setVar(st, "REPLY", shVar{val: unknown, computed: true})
		}
	case "mapfile", "readarray":
		name := "MAPFILE"
		for i := 1; i < len(a); i++ {
			v := a[i].val
			if strings.HasPrefix(v, "-") {
				if len(v) == 2 && strings.IndexByte("dnOsuC c", v[1]) >= 0 {
					i++
				}
				continue
			}
			name = v
		}
		r.setVar(st, name, shVar{val: unknown, computed: true})
	case "getopts":
		if len(a) > 2 {
			r.setVar(st, a[2].val, shVar{val: unknown, computed: true})
		}
	case "printf":
		if len(a) > 2 && a[1].val == "-v" {
			name := a[2].val
			text, ok := printfText(a[3:])
			if ok {
				r.setVar(st, name, shVar{val: text, known: true})
			} else {
				r.setVar(st, name, shVar{val: unknown, computed: true})
			}
		}
	case "unset":
		for _, w := range a[1:] {
			if strings.HasPrefix(w.val, "-") {
				continue
			}
			r.setVar(st, w.val, shVar{known: true, unset: true})
		}
	case "source", ".":
		st.vars = nil
		st.tainted = true
	case "export", "declare", "typeset", "local", "readonly":
		// The parser reads these as declarations; one spelled through a wrapper lands here.
		for _, w := range a[1:] {
			if k, _, ok := strings.Cut(w.val, "="); ok && validName(k) {
				r.setVar(st, k, shVar{val: unknown, computed: true})
			}
		}
	}
}
