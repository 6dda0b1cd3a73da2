package judge

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// Variables: the judge knows HOME, PWD and what the line itself sets plainly (X=~/.ssh; cat $X),
// and expands the parameter operators on what it knows (${HOME%/}, ${HOME:0}, ${X/a/b}). A
// variable from the environment is unknown; one the line sets from something unknown, in a branch
// or loop, in a function, by read, or after sourcing a script is unknown and computed: it may name
// anything, so a file named by it is asked about.

// shVar is a variable's value as far as the judge can tell.
type shVar struct {
	val      string // with unknown for the parts not known
	known    bool
	computed bool // set by the line from something the judge cannot tell
	unset    bool
}

// setVar records an assignment. In a branch, a loop or a function (cond) the judge cannot tell
// whether it ran, so the variable is unknown from here on.
func (r *reader) setVar(st *state, name string, v shVar) {
	if st.vars == nil {
		st.vars = map[string]shVar{}
	}
	if r.cond > 0 || r.inFunc > 0 {
		v = shVar{val: unknown, computed: true}
	}
	if r.inFunc > 0 && r.curFunc != "" {
		r.funcSets[r.curFunc] = append(r.funcSets[r.curFunc], name)
	}
	st.vars[name] = v
}

// taint makes names unknown and computed (a function that sets them ran).
func (st *state) taint(names []string) {
	if len(names) == 0 {
		return
	}
	if st.vars == nil {
		st.vars = map[string]shVar{}
	}
	for _, n := range names {
		st.vars[n] = shVar{val: unknown, computed: true}
	}
}

// lookup is a variable's value: what the line set, else HOME and PWD, else the environment's
// (unknown), or after a script was sourced, computed.
func (r *reader) lookup(name string, st *state) shVar {
	if v, ok := st.vars[name]; ok {
		return v
	}
	if st.tainted {
		return shVar{val: unknown, computed: true}
	}
	switch name {
	case "HOME":
		return shVar{val: r.home(), known: true}
	case "PWD":
		if st.cwd == "" {
			return shVar{val: unknown, computed: true}
		}
		return shVar{val: st.cwd, known: true}
	}
	if !validName(name) {
		// $1, $@, $?, $$ …: the arguments and the shell's own numbers.
		return shVar{val: unknown, computed: name != "?" && name != "$" && name != "#" && name != "!"}
	}
	return shVar{val: unknown}
}

// homeIn is the home folder a tilde means at this point: HOME as the line set it, else the
// person's.
func (r *reader) homeIn(st *state) string {
	if st != nil {
		if v, ok := st.vars["HOME"]; ok {
			if v.known {
				return v.val
			}
			return unknown
		}
		if st.tainted {
			return unknown
		}
	}
	return r.home()
}

// param expands ${…}.
func (r *reader) param(p *syntax.ParamExp, st *state) shVar {
	bad := shVar{val: unknown, computed: true}
	if p.Param == nil || p.Excl || p.Names != 0 || p.Width || p.IsSet || p.Flags != nil || p.NestedParam != nil || len(p.Modifiers) > 0 {
		r.nested(p, &word{}, st)
		return bad
	}
	if p.Index != nil {
		r.nested(p.Index, &word{}, st)
		return bad // arrays: not followed
	}
	v := r.lookup(p.Param.Value, st)
	if p.Length {
		if !v.known {
			return shVar{val: unknown, computed: v.computed}
		}
		return shVar{val: strconv.Itoa(utf8.RuneCountInString(v.val)), known: true}
	}
	set := v.known && !v.unset
	switch {
	case p.Slice != nil:
		r.nested(p.Slice.Offset, &word{}, st)
		r.nested(p.Slice.Length, &word{}, st)
		off, ok1 := arith(p.Slice.Offset)
		if !v.known || !ok1 {
			return shVar{val: unknown, computed: v.computed || !ok1}
		}
		rs := []rune(v.val)
		if off < 0 {
			off += len(rs)
			if off < 0 {
				return shVar{val: "", known: true}
			}
		}
		if off > len(rs) {
			off = len(rs)
		}
		end := len(rs)
		if p.Slice.Length != nil {
			n, ok := arith(p.Slice.Length)
			if !ok {
				return bad
			}
			if n < 0 {
				end = len(rs) + n
			} else {
				end = off + n
			}
			if end > len(rs) {
				end = len(rs)
			}
			if end < off {
				return shVar{val: "", known: true}
			}
		}
		return shVar{val: string(rs[off:end]), known: true}
	case p.Repl != nil:
		orig := r.word(p.Repl.Orig, st)
		with := word{known: true}
		if p.Repl.With != nil {
			with = r.word(p.Repl.With, st)
		}
		if !v.known {
			return shVar{val: unknown, computed: v.computed}
		}
		if !orig.known || !with.known {
			return bad
		}
		out, ok := replace(v.val, orig.val, with.val, p.Repl.All)
		if !ok {
			return bad
		}
		return shVar{val: out, known: true}
	case p.Exp != nil:
		arg := word{known: true}
		if p.Exp.Word != nil {
			arg = r.word(p.Exp.Word, st)
		}
		argVar := shVar{val: arg.val, known: arg.known, computed: !arg.known && arg.computed}
		nonEmpty := set && v.val != ""
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.AssignUnset, syntax.ErrorUnset:
			if v.known {
				if v.unset {
					return argVar
				}
				return v
			}
			return shVar{val: unknown, computed: v.computed || argVar.computed}
		case syntax.DefaultUnsetOrNull, syntax.AssignUnsetOrNull, syntax.ErrorUnsetOrNull:
			if v.known {
				if !nonEmpty {
					return argVar
				}
				return v
			}
			return shVar{val: unknown, computed: v.computed || argVar.computed}
		case syntax.AlternateUnset:
			if v.known {
				if v.unset {
					return shVar{known: true}
				}
				return argVar
			}
			return shVar{val: unknown, computed: v.computed || argVar.computed}
		case syntax.AlternateUnsetOrNull:
			if v.known {
				if !nonEmpty {
					return shVar{known: true}
				}
				return argVar
			}
			return shVar{val: unknown, computed: v.computed || argVar.computed}
		case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
			if !v.known {
				return shVar{val: unknown, computed: v.computed}
			}
			if !arg.known {
				return bad
			}
			out, ok := trimPattern(v.val, arg.val, p.Exp.Op)
			if !ok {
				return bad
			}
			return shVar{val: out, known: true}
		case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
			if !v.known {
				return shVar{val: unknown, computed: v.computed}
			}
			if p.Exp.Word != nil && arg.val != "" && arg.val != "?" {
				return bad
			}
			return shVar{val: changeCase(v.val, p.Exp.Op), known: true}
		case syntax.OtherParamOps:
			if !v.known {
				return shVar{val: unknown, computed: v.computed}
			}
			switch arg.val {
			case "U":
				return shVar{val: strings.ToUpper(v.val), known: true}
			case "L":
				return shVar{val: strings.ToLower(v.val), known: true}
			case "u":
				return shVar{val: changeCase(v.val, syntax.UpperFirst), known: true}
			case "Q":
				return shVar{val: "'" + strings.ReplaceAll(v.val, "'", `'\''`) + "'", known: true}
			case "E":
				return shVar{val: ansiC(v.val), known: true}
			}
			return bad
		}
		return bad
	}
	if v.unset {
		return shVar{known: true}
	}
	return v
}

// arith is the value of a plain number in an arithmetic expression (with unary minus).
func arith(e syntax.ArithmExpr) (int, bool) {
	switch e := e.(type) {
	case nil:
		return 0, false
	case *syntax.Word:
		s := e.Lit()
		n, err := strconv.Atoi(strings.TrimSpace(s))
		return n, err == nil
	case *syntax.UnaryArithm:
		if e.Op == syntax.Minus && !e.Post {
			n, ok := arith(e.X)
			return -n, ok
		}
		if e.Op == syntax.Plus && !e.Post {
			return arith(e.X)
		}
	case *syntax.ParenArithm:
		return arith(e.X)
	case *syntax.BinaryArithm:
		a, ok1 := arith(e.X)
		b, ok2 := arith(e.Y)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch e.Op {
		case syntax.Add:
			return a + b, true
		case syntax.Sub:
			return a - b, true
		case syntax.Mul:
			return a * b, true
		}
	}
	return 0, false
}

// patternRegexp compiles a shell pattern, anchored as asked.
func patternRegexp(pat, prefix, suffix string) (*regexp.Regexp, bool) {
	if len(pat) > 256 {
		return nil, false
	}
	expr, err := pattern.Regexp(pat, 0)
	if err != nil {
		return nil, false
	}
	re, err := regexp.Compile(prefix + "(?s:" + expr + ")" + suffix)
	if err != nil {
		return nil, false
	}
	return re, true
}

// trimPattern is ${v%pat}, ${v%%pat}, ${v#pat} and ${v##pat}.
func trimPattern(v, pat string, op syntax.ParExpOperator) (string, bool) {
	if len(v) > 4096 {
		return "", false
	}
	re, ok := patternRegexp(pat, "^", "$")
	if !ok {
		return "", false
	}
	n := len(v)
	switch op {
	case syntax.RemSmallPrefix:
		for i := 0; i <= n; i++ {
			if re.MatchString(v[:i]) {
				return v[i:], true
			}
		}
	case syntax.RemLargePrefix:
		for i := n; i >= 0; i-- {
			if re.MatchString(v[:i]) {
				return v[i:], true
			}
		}
	case syntax.RemSmallSuffix:
		for i := n; i >= 0; i-- {
			if re.MatchString(v[i:]) {
				return v[:i], true
			}
		}
	case syntax.RemLargeSuffix:
		for i := 0; i <= n; i++ {
			if re.MatchString(v[i:]) {
				return v[:i], true
			}
		}
	}
	return v, true
}

// replace is ${v/pat/with} and ${v//pat/with}; a pattern starting # or % is anchored.
func replace(v, pat, with string, all bool) (string, bool) {
	if len(v) > 4096 {
		return "", false
	}
	prefix, suffix := "", ""
	switch {
	case strings.HasPrefix(pat, "#"):
		prefix, pat = "^", pat[1:]
	case strings.HasPrefix(pat, "%"):
		suffix, pat = "$", pat[1:]
	}
	if pat == "" {
		if prefix != "" {
			return with + v, true
		}
		if suffix != "" {
			return v + with, true
		}
		return v, true
	}
	re, ok := patternRegexp(pat, prefix, suffix)
	if !ok {
		return "", false
	}
	re.Longest()
	if all && prefix == "" && suffix == "" {
		return re.ReplaceAllLiteralString(v, with), true
	}
	loc := re.FindStringIndex(v)
	if loc == nil {
		return v, true
	}
	return v[:loc[0]] + with + v[loc[1]:], true
}

func changeCase(v string, op syntax.ParExpOperator) string {
	if v == "" {
		return v
	}
	switch op {
	case syntax.UpperAll:
		return strings.ToUpper(v)
	case syntax.LowerAll:
		return strings.ToLower(v)
	}
	r, n := utf8.DecodeRuneInString(v)
	if op == syntax.UpperFirst {
		return strings.ToUpper(string(r)) + v[n:]
	}
	return strings.ToLower(string(r)) + v[n:]
}
