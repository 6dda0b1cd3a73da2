package judge

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
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
	// computed: an unknown part is what the line itself makes ($(…) whose output the judge cannot
	// tell, a variable the line set from one, read, a script it sources), so it may be any name.
	computed bool
	quoted   bool // some part was quoted
	found    bool // stands for what find or fd finds ({}), under starting points judged with them
	// foundIn are the folders the names of a search's output ($(find src -name x)) lie under.
	foundIn []string
	// printed is the text a process substitution made of one echo or printf of known words
	// prints (bash <(echo 'rm -rf /')), so a shell running it is judged on that text.
	printed   string
	printedOK bool
	splits    []int // where the blanks of an unquoted expansion split the word (field splitting)
	expanded  bool  // some part came from an expansion (a variable, $(…))
}

// lit makes a known word from a plain string (used for re-read lines).
func lit(s string) word { return word{val: s, known: true} }

// maxBraceWords is how many words a brace expansion may make before the judge reads the word as
// unknown instead (bash would make them all).
const maxBraceWords = 64

// wordCtx is what applies while one word is read.
type wordCtx struct {
	b      strings.Builder
	out    *word
	split  bool   // field splitting applies: an argument or a for list
	assign bool   // tilde expansion after = and : (an assignment, or a NAME=… argument)
	ifs    string // the characters field splitting splits at
}

// word reads w as one word: a redirect target, an assignment's value, a here-document.
func (r *reader) word(w *syntax.Word, st *state) word {
	return r.wordIn(w, st, false, false)
}

func (r *reader) wordIn(w *syntax.Word, st *state, split, assign bool) word {
	if w == nil {
		return lit("") // ${X/} has no pattern
	}
	out := word{}
	c := wordCtx{out: &out, split: split, assign: assign, ifs: " \t\n"}
	if v, ok := st.vars["IFS"]; ok {
		if v.known {
			c.ifs = v.val
		} else {
			c.ifs = unknown // the line set IFS to something the judge cannot tell
		}
	}
	for i, p := range w.Parts {
		r.part(&c, p, i == 0, false, st)
	}
	out.val = c.b.String()
	out.known = !strings.Contains(out.val, unknown)
	return out
}

// fields reads w as the words bash makes of it: brace expansion first, then the expansions, then
// field splitting of what unquoted expansions made. A word that only expands to nothing is gone.
func (r *reader) fields(w *syntax.Word, st *state) []word {
	words := []*syntax.Word{w}
	braced := false
	if hasBraceLit(w) {
		cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
		if syntax.SplitBraces(cp) {
			braced = true
			var exp []*syntax.Word
			over := false
			for x, err := range expand.BracesSeq(nil, cp) {
				if err != nil || len(exp) >= maxBraceWords {
					over = true
					break
				}
				exp = append(exp, x)
			}
			if over {
				words = []*syntax.Word{cp} // its brace parts read as unknown
			} else {
				words = exp
			}
		}
	}
	var out []word
	for _, x := range words {
		one := r.wordIn(x, st, true, assignLike(x))
		if braced {
			one.brace = true
			if !one.known {
				one.computed = true
			}
		}
		out = append(out, splitWord(one)...)
	}
	return out
}

// splitWord cuts a word where field splitting cut it, dropping empty fields; a word made only of
// unquoted expansions that came to nothing is no word at all.
func splitWord(w word) []word {
	if len(w.splits) == 0 {
		if w.val == "" && w.expanded && !w.quoted {
			return nil
		}
		return []word{w}
	}
	var out []word
	prev := 0
	for _, at := range append(w.splits, len(w.val)) {
		if at > prev {
			x := w
			x.splits = nil
			x.val = w.val[prev:at]
			x.known = !strings.Contains(x.val, unknown)
			out = append(out, x)
		}
		prev = at
	}
	return out
}

func hasBraceLit(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// assignLike reports a word that starts NAME=, whose tildes after = and : bash expands.
func assignLike(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return false
	}
	i := strings.IndexByte(l.Value, '=')
	return i > 0 && validName(l.Value[:i])
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// expansion writes text an expansion made: outside double quotes, its blanks split the word
// (where splitting applies) and its *, ? and [ are globs.
func (c *wordCtx) expansion(text string, inDbl bool) {
	c.out.expanded = true
	if inDbl {
		c.b.WriteString(text)
		return
	}
	if c.split && c.ifs == unknown {
		// Splitting at characters the judge cannot tell: the words are unknown.
		c.unknownPart(true)
		return
	}
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if c.split && strings.IndexByte(c.ifs, ch) >= 0 {
			if n := c.b.Len(); len(c.out.splits) == 0 || c.out.splits[len(c.out.splits)-1] != n {
				c.out.splits = append(c.out.splits, n)
			}
			continue
		}
		if ch == '*' || ch == '?' || ch == '[' {
			c.out.glob = true
		}
		c.b.WriteByte(ch)
	}
}

// unknownPart writes a part only known when the line runs.
func (c *wordCtx) unknownPart(computed bool) {
	c.out.expanded = true
	c.out.computed = c.out.computed || computed
	c.b.WriteString(unknown)
}

// tildes expands ~ and ~user at the start of v (first), and after : and the first = of an
// assignment.
func (r *reader) tildes(c *wordCtx, v string, first bool, st *state) string {
	if !first && !c.assign {
		return v
	}
	var b strings.Builder
	at := func(i int) bool { // a tilde prefix may start at i
		if i == 0 {
			return first
		}
		if !c.assign {
			return false
		}
		return v[i-1] == ':' || v[i-1] == '=' && strings.IndexByte(v[:i-1], '=') < 0 && (c.b.Len() > 0 || i-1 > 0)
	}
	for i := 0; i < len(v); i++ {
		if v[i] == '~' && at(i) {
			end := i + 1
			for end < len(v) && v[end] != '/' && !(c.assign && v[end] == ':') {
				end++
			}
			user := v[i+1 : end]
			switch {
			case user == "":
				b.WriteString(r.homeIn(st))
				if i == 0 {
					c.out.tilde = true
				}
				i = end - 1
				continue
			case user == "+":
				b.WriteString(st.cwdOr(unknown))
				i = end - 1
				continue
			case validUser(user):
				b.WriteString(filepath.Join(filepath.Dir(r.homeIn(st)), user))
				if i == 0 {
					c.out.tilde = true
				}
				i = end - 1
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func (r *reader) part(c *wordCtx, p syntax.WordPart, first, inDbl bool, st *state) {
	out := c.out
	switch p := p.(type) {
	case *syntax.Lit:
		v := p.Value
		if inDbl {
			c.b.WriteString(unescapeDbl(v))
			return
		}
		if strings.IndexByte(v, '~') >= 0 {
			v = r.tildes(c, v, first, st)
		}
		if hasBrace(v) {
			out.brace = true
		}
		for i := 0; i < len(v); i++ {
			ch := v[i]
			switch ch {
			case '\\':
				if i+1 < len(v) {
					i++
					if v[i] != '\n' {
						c.b.WriteByte(v[i])
					}
				}
				continue
			case '*', '?', '[':
				out.glob = true
			}
			c.b.WriteByte(ch)
		}
	case *syntax.SglQuoted:
		out.quoted = true
		if p.Dollar {
			c.b.WriteString(ansiC(p.Value))
		} else {
			c.b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		out.quoted = true
		for _, q := range p.Parts {
			r.part(c, q, false, true, st)
		}
	case *syntax.ParamExp:
		out.vars = true
		v := r.param(p, st)
		switch {
		case v.known:
			c.expansion(v.val, inDbl)
		case strings.Contains(v.val, unknown) && v.val != unknown:
			// partly known (${X:-$HOME/.ssh}): the known parts stay, without splitting them.
			out.expanded = true
			out.computed = out.computed || v.computed
			c.b.WriteString(v.val)
		default:
			c.unknownPart(v.computed)
		}
	case *syntax.CmdSubst:
		out.subst = true
		start := len(r.cmds)
		if r.stmtsSub(p.Stmts, st) {
			out.download = true
		}
		if text, ok := printedText(r.cmds[start:]); ok && len(p.Stmts) == 1 {
			c.expansion(strings.TrimRight(text, "\n"), inDbl)
			return
		}
		if roots, ok := listedRoots(r.cmds[start:]); ok && len(p.Stmts) == 1 {
			// Names a search prints: they lie under what it searched.
			out.found = true
			out.foundIn = append(out.foundIn, roots...)
			c.unknownPart(false)
			return
		}
		c.unknownPart(true)
	case *syntax.ProcSubst:
		out.subst, out.proc = true, true
		start := len(r.cmds)
		if r.stmtsSub(p.Stmts, st) {
			out.download = true
		}
		if len(p.Stmts) == 1 {
			out.printed, out.printedOK = printedText(r.cmds[start:])
		}
		c.unknownPart(true)
	case *syntax.ArithmExp:
		out.vars = true
		r.nested(p, out, st)
		c.unknownPart(true)
	case *syntax.ExtGlob:
		out.glob = true
		c.b.WriteString("*")
	case *syntax.BraceExp:
		out.brace = true
		c.unknownPart(true)
	default:
		c.unknownPart(true)
	}
}

// nested reads the command substitutions hidden inside an expansion (${x:-$(cmd)}, $(( $(cmd) ))).
func (r *reader) nested(n syntax.Node, out *word, st *state) {
	if n == nil {
		return
	}
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

// printedText is what cmds print when they are one echo, printf, basename or dirname of known
// words, without redirects: the only programs whose output the judge can tell before they run.
func printedText(cmds []*command) (string, bool) {
	if len(cmds) != 1 {
		return "", false
	}
	c := cmds[0]
	if len(c.redirs) > 0 || len(c.wrappers) > 0 || c.progUnknown {
		return "", false
	}
	switch c.prog {
	case "echo", "printf":
		text, ok := echoText(c)
		return text, ok
	case "realpath", "readlink":
		// The path itself, as far as the judge can tell without following its links (the judge
		// follows them where the path is judged).
		var out []string
		for _, a := range c.args[1:] {
			if strings.HasPrefix(a.val, "-") {
				if c.prog == "readlink" && !strings.ContainsAny(a.val, "fem") {
					return "", false // plain readlink prints a link's target
				}
				continue
			}
			if !a.known || c.cwd == "" {
				return "", false
			}
			out = append(out, resolve(c.cwd, a.val))
		}
		if len(out) == 0 || c.prog == "readlink" && !hasFlag(c.args, "fem", "canonicalize", "canonicalize-existing", "canonicalize-missing") {
			return "", false
		}
		return strings.Join(out, "\n") + "\n", true
	case "basename", "dirname":
		var parts []string
		for _, a := range c.args[1:] {
			if !a.known || strings.HasPrefix(a.val, "-") {
				return "", false
			}
			parts = append(parts, a.val)
		}
		if len(parts) == 0 || c.prog == "basename" && len(parts) > 2 || c.prog == "dirname" && len(parts) > 1 {
			return "", false
		}
		p := strings.TrimRight(parts[0], "/")
		if c.prog == "dirname" {
			if p == "" {
				return "/\n", true
			}
			return filepath.Dir(p) + "\n", true
		}
		b := filepath.Base(p)
		if len(parts) == 2 {
			b = strings.TrimSuffix(b, parts[1])
		}
		return b + "\n", true
	}
	return "", false
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
