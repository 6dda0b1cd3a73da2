package judge

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// unknown stands in a word's value for a part only known when the command runs: a variable,
// $(…), an arithmetic expansion. It cannot appear in a real argument.
const unknown = "\x00"

// word is one shell word as the judge reads it.
type word struct {
	val      string // the value, with unknown for parts not known before the command runs
	known    bool   // val has no unknown parts
	glob     bool   // an unquoted *, ? or [ …
	vars     bool   // a parameter or arithmetic expansion
	subst    bool   // $(…), `…` or <(…)
	proc     bool   // <(…) or >(…)
	brace    bool   // a brace list {a,b} or {1..3}
	download bool   // a substitution inside it downloads from the internet
	tilde    bool   // began with an unquoted ~
	// printed is the text a process substitution made of one echo or printf of known words
	// prints (bash <(echo 'rm -rf /')), so a shell running it is judged on that text.
	printed   string
	printedOK bool
}

// lit makes a known word from a plain string (used for re-read lines).
func lit(s string) word { return word{val: s, known: true} }

func (r *reader) word(w *syntax.Word, st *state) word {
	var b strings.Builder
	out := word{}
	for i, p := range w.Parts {
		r.part(&b, &out, p, i == 0, false, st)
	}
	out.val = b.String()
	out.known = !strings.Contains(out.val, unknown)
	return out
}

func (r *reader) part(b *strings.Builder, out *word, p syntax.WordPart, first, inDbl bool, st *state) {
	switch p := p.(type) {
	case *syntax.Lit:
		v := p.Value
		if inDbl {
			b.WriteString(unescapeDbl(v))
			return
		}
		if first && strings.HasPrefix(v, "~") {
			end := strings.IndexByte(v, '/')
			if end < 0 {
				end = len(v)
			}
			user := v[1:end]
			switch {
			case user == "":
				b.WriteString(r.home())
				out.tilde = true
				v = v[end:]
			case user == "+":
				b.WriteString(st.cwdOr(unknown))
				v = v[end:]
			case validUser(user):
				b.WriteString(filepath.Join(filepath.Dir(r.home()), user))
				out.tilde = true
				v = v[end:]
			}
		}
		if hasBrace(v) {
			out.brace = true
		}
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch c {
			case '\\':
				if i+1 < len(v) {
					i++
					if v[i] != '\n' {
						b.WriteByte(v[i])
					}
				}
				continue
			case '*', '?', '[':
				out.glob = true
			}
			b.WriteByte(c)
		}
	case *syntax.SglQuoted:
		if p.Dollar {
			b.WriteString(ansiC(p.Value))
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			r.part(b, out, q, false, true, st)
		}
	case *syntax.ParamExp:
		out.vars = true
		r.nested(p, out, st)
		// ${HOME:?}, ${HOME:-x}, ${HOME:=x}: HOME is always set, so these are HOME itself.
		homeOnly := p.Exp == nil || p.Param != nil && p.Param.Value == "HOME" && homeKeeps(p.Exp.Op)
		if p.Param != nil && !p.Excl && !p.Length && p.Index == nil && p.Slice == nil && p.Repl == nil && homeOnly && p.Names == 0 {
			switch p.Param.Value {
			case "HOME":
				b.WriteString(r.home())
				return
			case "PWD":
				b.WriteString(st.cwdOr(unknown))
				return
			}
		}
		b.WriteString(unknown)
	case *syntax.CmdSubst:
		out.subst = true
		if r.stmtsSub(p.Stmts, st) {
			out.download = true
		}
		b.WriteString(unknown)
	case *syntax.ProcSubst:
		out.subst, out.proc = true, true
		start := len(r.cmds)
		if r.stmtsSub(p.Stmts, st) {
			out.download = true
		}
		if len(p.Stmts) == 1 {
			out.printed, out.printedOK = printedText(r.cmds[start:])
		}
		b.WriteString(unknown)
	case *syntax.ArithmExp:
		out.vars = true
		r.nested(p, out, st)
		b.WriteString(unknown)
	case *syntax.ExtGlob:
		out.glob = true
		b.WriteString("*")
	case *syntax.BraceExp:
		out.brace = true
		b.WriteString(unknown)
	default:
		b.WriteString(unknown)
	}
}

// nested reads the command substitutions hidden inside an expansion (${x:-$(cmd)}, $(( $(cmd) ))).
func (r *reader) nested(n syntax.Node, out *word, st *state) {
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.CmdSubst:
			out.subst = true
			if r.stmtsSub(m.Stmts, st) {
				out.download = true
			}
			return false
		case *syntax.ProcSubst:
			out.subst = true
			if r.stmtsSub(m.Stmts, st) {
				out.download = true
			}
			return false
		}
		return true
	})
}

// stmtsSub reads the commands of a substitution and reports whether one of them downloads.
func (r *reader) stmtsSub(stmts []*syntax.Stmt, st *state) bool {
	r.line.subst = true
	start := len(r.cmds)
	sub := st.copy()
	r.inSubst++
	r.stmts(stmts, sub)
	r.inSubst--
	for _, c := range r.cmds[start:] {
		if downloads(c) {
			return true
		}
	}
	return false
}

func validUser(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// hasBrace reports an unquoted brace list or sequence: {a,b} or {1..3}.
func hasBrace(v string) bool {
	open := strings.IndexByte(v, '{')
	if open < 0 {
		return false
	}
	rest := v[open:]
	end := strings.IndexByte(rest, '}')
	if end < 0 {
		return false
	}
	inner := rest[1:end]
	return strings.Contains(inner, ",") || strings.Contains(inner, "..")
}

// unescapeDbl removes the backslashes bash removes inside double quotes.
func unescapeDbl(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(v[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ansiC decodes bash's $'…' quoting, so $'\x73udo' is read as sudo.
func ansiC(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := v[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case 'x', 'u', 'U':
			max := 2
			if e == 'u' {
				max = 4
			} else if e == 'U' {
				max = 8
			}
			j := i + 1
			for j < len(v) && j-i-1 < max && isHex(v[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if utf8.ValidRune(rune(n)) {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case 'c':
			if i+1 < len(v) {
				b.WriteByte(v[i+1] & 0x1f)
				i++
			}
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(v) && j-i < 3 && v[j] >= '0' && v[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(v[i:j], 8, 16)
				b.WriteByte(byte(n))
				i = j - 1
				continue
			}
			b.WriteByte(e) // \\ \' \" \?
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// printedText is what cmds print when they are one echo or printf of known words, without
// redirects: the only programs whose output the judge can tell before they run.
func printedText(cmds []*command) (string, bool) {
	if len(cmds) != 1 {
		return "", false
	}
	c := cmds[0]
	if len(c.redirs) > 0 || len(c.wrappers) > 0 || c.progUnknown || (c.prog != "echo" && c.prog != "printf") {
		return "", false
	}
	return echoText(c)
}

// homeKeeps reports an expansion operator that leaves a set, non-empty variable as it is.
func homeKeeps(op syntax.ParExpOperator) bool {
	switch op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull,
		syntax.AssignUnset, syntax.AssignUnsetOrNull:
		return true
	}
	return false
}
