package judge

import (
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Limits on what the reader takes on. Past them the line is asked about.
const (
	maxDepth    = 4        // bash -c inside bash -c inside …
	maxCommands = 512      // simple commands in one line, all depths
	maxLine     = 64 << 10 // bytes in one command line
)

// state is what a shell carries from one command to the next: the folder it is in and the
// variables the line set.
type state struct {
	cwd     string           // absolute; "" once a cd went somewhere the judge cannot know
	vars    map[string]shVar // what the line set
	tainted bool             // a script the judge cannot read was sourced: any variable may have changed
}

func (s *state) copy() *state {
	c := *s
	if s.vars != nil {
		c.vars = make(map[string]shVar, len(s.vars))
		for k, v := range s.vars {
			c.vars[k] = v
		}
	}
	return &c
}

func (s *state) cwdOr(def string) string {
	if s.cwd == "" {
		return def
	}
	return s.cwd
}

type redir struct {
	op     syntax.RedirOperator
	fd     string // the N in N>file
	target word
}

// command is one simple command after wrappers (sudo, env, nohup, xargs …) are taken off.
type command struct {
	args        []word // args[0] is the program as written
	prog        string // the program's lower-case base name; "" for a bare redirect
	progUnknown bool   // the program's name is only known when the line runs
	wrappers    []string
	admin       bool // run as the administrator (sudo, doas, su …)
	adminShell  bool // an open administrator shell (sudo -i, sudo su, sudo bash)
	assigns     bool // VAR=value or env in front
	redirs      []redir
	cwd         string // "" when unknown
	subLevel    int    // inside this many $(…)
	inFunc      bool
	fn          bool // calls a function the line defines
	pipe, stage int  // pipeline id (0: none) and stage
	extraArgs   bool // xargs or find -exec add arguments the judge cannot see
	code        bool // the arguments are inline code (sh -c, python -c), not paths
	script      int  // index of the script file an interpreter runs, 0 if none
	stdinScript bool // an interpreter reading its program from standard input
	stdinText   *word
	first       bool // the first command of the line
	findDelete  bool
	findExec    bool
	findFollow  bool
	nested      bool // read from a string another command runs (bash -c, eval)
	// envs are the VAR=value words in front of the command (and env's), by name.
	envs map[string]word
	// inline is inline code the command runs in a language the judge does not read (python -c,
	// awk's program, vim -c): the names in it that are plainly paths are judged as reads.
	inline []word
	// extra are names the command's wrappers read or write (xargs -a FILE, script FILE).
	extra []access
	// runs: an option runs another program (rg --pre, sort --compress-program, git -c core.pager).
	runs bool
	// listed: the command reads names from a file the judge cannot see (file -f, tar -T).
	listed bool
	// opaque says why a git command brings in code the judge cannot read; gitConfigCode names
	// the code-running key a git config command sets; gitConfigWrites: it writes a config file;
	// gitConfigFile: it names the file (--file).
	opaque          []string
	gitConfigCode   string
	gitConfigWrites bool
	gitConfigFile   bool
	// xargsUnknown: xargs gives the command names from input the judge cannot read; feedRoots:
	// the places a search that feeds it searched.
	xargsUnknown bool
	feedRoots    []word
	ops          *[]word // operands, once read
	// written is the command as the line has it, redirects and quotes included; "" for one the
	// judge made itself (from a wrapper, an alias, a git config).
	written     string
	xargsProcs0 bool // xargs -P0: no limit on how many it runs at once
	parsed      *parsedArgs
}

// opts is the command's words read by its program's spec, or nil for a program without one.
func (c *command) opts() *parsedArgs {
	if c.parsed != nil {
		return c.parsed
	}
	sp := programOpts[c.prog]
	if sp == nil || c.prog == "" {
		return nil
	}
	c.parsed = parseArgs(sp, c.args)
	return c.parsed
}

// source is the command as a person would read it, shortened for a sentence: as it was written,
// when that fits between backticks on one line, else its words as the shell reads them.
func (c *command) source() string {
	if w := strings.TrimSpace(c.written); w != "" && !strings.ContainsAny(w, "`\n") {
		if r := []rune(w); len(r) > 80 {
			w = string(r[:77]) + "…"
		}
		return w
	}
	return c.words()
}

// words is the command's words as the shell reads them (quotes gone, what is unknown until it
// runs as …), shortened: the same for every way of quoting it, as a command's kind needs.
func (c *command) words() string {
	var b strings.Builder
	for _, w := range c.wrappers {
		b.WriteString(w)
		b.WriteByte(' ')
	}
	for i, a := range c.args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.ReplaceAll(a.val, unknown, "…"))
		if b.Len() > 80 {
			break
		}
	}
	s := b.String()
	if len(s) > 80 {
		s = s[:77] + "…"
	}
	return s
}

// line is what the reader learned about the whole line.
type line struct {
	subst, vars, brace, assigns, funcs, aliases bool
	fork                                        bool     // a fork bomb
	downloadExec                                bool     // a script from the internet run unseen (curl | sh)
	problems                                    []string // why parts of the line could not be read
}

// reader walks a parsed line and collects its simple commands.
type reader struct {
	s       *Settings
	cmds    []*command
	line    line
	funcs   []string
	inSubst int
	inFunc  int
	depth   int
	admin   int // inside sudo bash -c …
	pipes   int
	cond    int // inside a branch, a loop or the right of && and ||: what is set there may not be
	// curFunc is the function whose body is being read; funcSets and funcCd are what each
	// function of the line sets and whether it changes folder, for where it is called.
	curFunc  string
	funcSets map[string][]string
	funcCd   map[string]bool
	funcBody map[string]*syntax.Stmt
	// selfSpawn: the line runs the shell itself again ($0); jobs: statements sent to the background.
	selfSpawn bool
	jobs      int
	// copies are where the line copies Ensemble's own program.
	copies map[string]bool
	// links are the symbolic links the line makes (ln -s TARGET LINK): link → target, absolute.
	links map[string]string
	// text is the shell text being read (the line, or a string a shell inside it runs), for the
	// commands as they were written.
	text string
}

func (r *reader) home() string {
	if r.s.Home == "" {
		return "/nonexistent-home"
	}
	return r.s.Home
}

func (r *reader) problem(p string) {
	for _, q := range r.line.problems {
		if q == p {
			return
		}
	}
	r.line.problems = append(r.line.problems, p)
}

// parsers keeps bash parsers between lines: a parser is large, and a line's tree is not kept
// once the line is read, so one parser reads line after line.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// readLine parses and walks one command line at cwd.
func readLine(s *Settings, text, cwd string) *reader {
	r := &reader{s: s}
	if len(text) > maxLine {
		r.problem("the command is too long to read")
		return r
	}
	r.reread(text, &state{cwd: cwd}, true)
	if r.recursiveSpawn() || r.selfSpawn && (r.pipes > 0 || r.jobs > 0) {
		r.line.fork = true
	}
	return r
}

// reread parses text as a shell line and walks it with st.
func (r *reader) reread(text string, st *state, top bool) {
	if r.depth >= maxDepth {
		r.problem("it nests shells inside shells too deeply to read")
		return
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(text), "")
	defer parsers.Put(p)
	if err != nil {
		if top {
			r.problem("it is not a complete shell command (" + shortErr(err) + ")")
		} else {
			r.problem("the command it passes to a shell cannot be read")
		}
		if smellsDangerous(text) {
			r.line.downloadExec = r.line.downloadExec || strings.Contains(text, "curl") || strings.Contains(text, "wget")
			r.problem("dangerous")
		}
		return
	}
	outer := r.text
	r.text = text
	r.depth++
	r.stmts(f.Stmts, st)
	r.depth--
	r.text = outer
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

func (r *reader) stmts(list []*syntax.Stmt, st *state) {
	for _, s := range list {
		r.stmt(s, st)
	}
}

func (r *reader) stmt(s *syntax.Stmt, st *state) {
	if len(r.cmds) > maxCommands {
		r.problem("it has too many commands to read")
		return
	}
	if s.Background || s.Coprocess {
		st = st.copy() // a job in the background runs in a subshell of its own
		r.jobs++
	}
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		r.call(c, s.Redirs, st)
		return
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			r.pipeline(c, st)
		} else {
			r.stmt(c.X, st)
			r.branch(st, func() { r.stmt(c.Y, st) })
		}
	case *syntax.Subshell:
		r.stmts(c.Stmts, st.copy())
	case *syntax.Block:
		r.stmts(c.Stmts, st)
	case *syntax.IfClause:
		r.stmts(c.Cond, st)
		r.branch(st, func() {
			r.stmts(c.Then, st)
			for cl := c.Else; cl != nil; cl = cl.Else {
				r.stmts(cl.Cond, st)
				r.stmts(cl.Then, st)
			}
		})
	case *syntax.WhileClause:
		r.infiniteLoop(c)
		r.branch(st, func() {
			r.stmts(c.Cond, st)
			r.stmts(c.Do, st)
		})
	case *syntax.ForClause:
		r.line.vars = true
		r.forLoop(c, st)
	case *syntax.CaseClause:
		r.markWord(r.word(c.Word, st))
		r.branch(st, func() {
			for _, it := range c.Items {
				r.stmts(it.Stmts, st)
			}
		})
	case *syntax.FuncDecl:
		r.funcDecl(c, st)
	case *syntax.ArithmCmd:
		r.line.vars = true
		var w word
		r.nested(c, &w, st)
	case *syntax.LetClause:
		r.line.vars = true
		var w word
		r.nested(c, &w, st)
	case *syntax.TestClause:
		syntax.Walk(c.X, func(n syntax.Node) bool {
			if w, ok := n.(*syntax.Word); ok {
				r.markWord(r.word(w, st))
				return false
			}
			return true
		})
	case *syntax.DeclClause:
		r.line.assigns = true
		for _, a := range c.Args {
			r.assign(a, st, true)
		}
	case *syntax.TimeClause:
		if c.Stmt != nil {
			r.stmt(c.Stmt, st)
		}
	case *syntax.CoprocClause:
		r.stmt(c.Stmt, st)
	case *syntax.TestDecl:
		r.stmt(c.Body, st)
	default:
		r.problem("it uses a shell form Ensemble does not read")
	}
	if len(s.Redirs) > 0 {
		rd, in := r.redirs(s.Redirs, st)
		r.add(&command{redirs: rd, stdinText: in, cwd: st.cwd})
	}
}

// branch reads what may or may not run (a branch, a loop, the right of && and ||): a folder it
// changes to is unknown after it, as are the variables it sets.
func (r *reader) branch(st *state, read func()) {
	cwd := st.cwd
	r.cond++
	read()
	r.cond--
	if st.cwd != cwd {
		st.cwd = ""
	}
}

// forLoop reads a for loop's body once for each word of its list (up to a few), with the loop's
// variable set to it; past that, or for a list the judge cannot read, the variable is unknown.
func (r *reader) forLoop(c *syntax.ForClause, st *state) {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		if l, ok := c.Loop.(*syntax.CStyleLoop); ok {
			var w word
			r.nested(l, &w, st)
			r.infiniteLoopBody(l.Cond == nil, c.Do)
		}
		r.branch(st, func() { r.stmts(c.Do, st) })
		return
	}
	var items []word
	for _, w := range wi.Items {
		for _, f := range r.fields(w, st) {
			r.markWord(f)
			items = append(items, f)
		}
	}
	name := wi.Name.Value
	if !wi.InPos.IsValid() || len(items) > 8 || len(items) == 0 {
		r.setVar(st, name, shVar{val: unknown, computed: true})
		r.branch(st, func() { r.stmts(c.Do, st) })
	} else {
		r.branch(st, func() {
			for _, it := range items {
				if st.vars == nil {
					st.vars = map[string]shVar{}
				}
				st.vars[name] = shVar{val: it.val, known: it.known, computed: it.computed}
				r.stmts(c.Do, st)
			}
		})
	}
	r.setVar(st, name, shVar{val: unknown, computed: true})
}

// assign reads NAME=value and returns the value; persist is false for one command's own
// environment (X=1 cmd), which does not change what the line's later words expand to.
func (r *reader) assign(a *syntax.Assign, st *state, persist bool) (out word) {
	out = lit("")
	var v shVar
	switch {
	case a.Value != nil:
		w := r.wordIn(a.Value, st, false, true)
		r.markWord(w)
		out = w
		v = shVar{val: w.val, known: w.known, computed: !w.known}
	case a.Array != nil:
		for _, e := range a.Array.Elems {
			if e.Value != nil {
				r.markWord(r.word(e.Value, st))
			}
		}
		v = shVar{val: unknown, computed: true}
		out = word{val: unknown, computed: true}
	case a.Naked:
		return
	default:
		v = shVar{known: true}
	}
	if a.Index != nil {
		var w word
		r.nested(a.Index, &w, st)
		v = shVar{val: unknown, computed: true}
	}
	if !persist || a.Name == nil {
		return
	}
	if a.Append {
		old := r.lookup(a.Name.Value, st)
		if old.known && v.known {
			v.val = old.val + v.val
		} else {
			v = shVar{val: unknown, computed: true}
		}
	}
	r.setVar(st, a.Name.Value, v)
	r.exportedEnv(a.Name.Value, out, st)
	return
}

func (r *reader) funcDecl(c *syntax.FuncDecl, st *state) {
	r.line.funcs = true
	var names []string
	if c.Name != nil {
		names = append(names, strings.ToLower(c.Name.Value))
	}
	for _, n := range c.Names {
		names = append(names, strings.ToLower(n.Value))
	}
	r.funcs = append(r.funcs, names...)
	if r.funcSets == nil {
		r.funcSets, r.funcCd, r.funcBody = map[string][]string{}, map[string]bool{}, map[string]*syntax.Stmt{}
	}
	start := len(r.cmds)
	prev := r.curFunc
	if len(names) > 0 {
		r.curFunc = names[0]
	}
	r.inFunc++
	body := st.copy()
	r.stmt(c.Body, body)
	r.inFunc--
	r.curFunc = prev
	for _, n := range names {
		r.funcSets[n] = r.funcSets[names[0]]
		r.funcCd[n] = body.cwd != st.cwd
		r.funcBody[n] = c.Body
	}
	// A function that calls itself in a pipe or in the background multiplies: a fork bomb.
	spawns := false
	syntax.Walk(c.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background || n.Coprocess || n.Disown {
				spawns = true
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				spawns = true
			}
		}
		return !spawns
	})
	if !spawns {
		return
	}
	for _, cmd := range r.cmds[start:] {
		for _, n := range names {
			if cmd.prog == n {
				r.line.fork = true
			}
		}
	}
}

func (r *reader) pipeline(c *syntax.BinaryCmd, st *state) {
	var stages []*syntax.Stmt
	var flat func(s *syntax.Stmt)
	flat = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 {
			flat(b.X)
			flat(b.Y)
			return
		}
		stages = append(stages, s)
	}
	flat(c.X)
	flat(c.Y)
	r.pipes++
	id := r.pipes
	level := r.inSubst
	start := len(r.cmds)
	for i, s := range stages {
		from := len(r.cmds)
		r.stmt(s, st.copy()) // each stage runs in a subshell: a cd there does not last
		for _, cmd := range r.cmds[from:] {
			if cmd.pipe == 0 && cmd.subLevel == level {
				cmd.pipe, cmd.stage = id, i
			}
		}
	}
	r.pipeScripts(id, start)
}

// pipeScripts reads what a pipeline feeds an interpreter: echo "…" | sh is read again,
// curl … | sh is the floor, anything else unseen is asked about.
func (r *reader) pipeScripts(id, start int) {
	n := len(r.cmds)
	for i := start; i < n; i++ {
		c := r.cmds[i]
		if c.pipe != id || c.stage == 0 || !c.stdinScript || c.stdinText != nil {
			continue
		}
		var feeders []*command
		for _, f := range r.cmds[start:n] {
			if f.pipe == id && f.stage < c.stage {
				if downloads(f) {
					r.line.downloadExec = true
				}
				if f.stage == c.stage-1 {
					feeders = append(feeders, f)
				}
			}
		}
		if r.line.downloadExec {
			continue
		}
		if len(feeders) == 1 && (feeders[0].prog == "echo" || feeders[0].prog == "printf") {
			if text, ok := echoText(feeders[0]); ok || text != "" {
				if isShell(c.prog) || c.prog == "source" || c.prog == "." {
					r.admin += b2i(c.admin)
					r.reread(text, &state{cwd: c.cwd}, false)
					r.admin -= b2i(c.admin)
				}
				if ok {
					continue
				}
			}
		}
		r.problem("it pipes a program into `" + c.prog + "` that Ensemble cannot read first")
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// echoText is what echo or printf with known arguments prints.
func echoText(c *command) (string, bool) {
	if c.prog == "printf" {
		if text, ok := printfText(c.args[1:]); ok {
			return text, true
		}
		// A format the judge does not follow: what a shell runs is still read from a rough text,
		// but no file name is taken from it.
		var parts []string
		for _, a := range c.args[1:] {
			if !a.known {
				return "", false
			}
			parts = append(parts, a.val)
		}
		return ansiC(strings.ReplaceAll(strings.Join(parts, " "), "%s", "")), false
	}
	var parts []string
	opts, escapes := true, false
	for _, a := range c.args[1:] {
		if !a.known {
			return "", false
		}
		if opts && len(a.val) > 1 && a.val[0] == '-' && strings.Trim(a.val[1:], "neE") == "" {
			if strings.Contains(a.val, "e") {
				escapes = true
			}
			continue
		}
		opts = false
		parts = append(parts, a.val)
	}
	text := strings.Join(parts, " ")
	if escapes {
		text = ansiC(text)
	}
	return text + "\n", true
}

// printfText is what printf FORMAT ARGS… prints, for the directives %s, %b, %d, %i, %c and %%;
// any other makes it unknown.
func printfText(args []word) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	for _, a := range args {
		if !a.known {
			return "", false
		}
	}
	format := ansiC(args[0].val)
	rest := args[1:]
	var b strings.Builder
	for round := 0; round < 64; round++ {
		used := false
		for i := 0; i < len(format); i++ {
			ch := format[i]
			if ch != '%' {
				b.WriteByte(ch)
				continue
			}
			if i+1 >= len(format) {
				return "", false
			}
			i++
			d := format[i]
			if d == '%' {
				b.WriteByte('%')
				continue
			}
			arg := ""
			if len(rest) > 0 {
				arg, rest, used = rest[0].val, rest[1:], true
			}
			switch d {
			case 's':
				b.WriteString(arg)
			case 'b':
				b.WriteString(ansiC(arg))
			case 'd', 'i':
				if arg == "" {
					arg = "0"
				}
				if _, err := strconv.Atoi(arg); err != nil {
					return "", false
				}
				b.WriteString(arg)
			case 'c':
				if arg != "" {
					b.WriteByte(arg[0])
				}
			default:
				return "", false
			}
		}
		if !used || len(rest) == 0 {
			break
		}
	}
	return b.String(), true
}

func (r *reader) redirs(list []*syntax.Redirect, st *state) ([]redir, *word) {
	var out []redir
	var in *word
	for _, rd := range list {
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if rd.Hdoc != nil {
				w := r.word(rd.Hdoc, st)
				r.markWord(w)
				in = &w
			} else {
				w := lit("")
				in = &w
			}
			continue
		case syntax.WordHdoc:
			w := r.word(rd.Word, st)
			r.markWord(w)
			w.val += "\n"
			in = &w
			continue
		}
		x := redir{op: rd.Op}
		if rd.N != nil {
			x.fd = rd.N.Value
		}
		if rd.Word != nil {
			x.target = r.word(rd.Word, st)
			r.markWord(x.target)
		}
		out = append(out, x)
	}
	return out, in
}

func (r *reader) markWord(w word) {
	r.line.vars = r.line.vars || w.vars
	r.line.subst = r.line.subst || w.subst
	r.line.brace = r.line.brace || w.brace
}

func (r *reader) call(c *syntax.CallExpr, rds []*syntax.Redirect, st *state) {
	if len(c.Args) > 0 && selfName(c.Args[0]) {
		r.selfSpawn = true
	}
	var envs map[string]word
	for _, a := range c.Assigns {
		w := r.assign(a, st, len(c.Args) == 0)
		if a.Name != nil && len(c.Args) > 0 {
			if envs == nil {
				envs = map[string]word{}
			}
			envs[a.Name.Value] = w
		}
	}
	if len(c.Args) == 0 {
		r.line.assigns = true
		if len(rds) > 0 {
			rd, in := r.redirs(rds, st)
			r.add(&command{redirs: rd, stdinText: in, cwd: st.cwd})
		}
		return
	}
	args := make([]word, 0, len(c.Args))
	for _, w := range c.Args {
		for _, f := range r.fields(w, st) {
			r.markWord(f)
			args = append(args, f)
		}
	}
	rd, in := r.redirs(rds, st)
	cmd := &command{assigns: len(c.Assigns) > 0, envs: envs, redirs: rd, stdinText: in, cwd: st.cwd, written: r.written(c, rds)}
	if len(args) == 0 {
		// Every word expanded to nothing: only the redirects run.
		r.add(cmd)
		return
	}
	r.run(cmd, args, st)
}

// written is a simple command with its redirects as the text has it (`echo 'hello' >> README.md`),
// "" when the offsets do not fit the text.
func (r *reader) written(c *syntax.CallExpr, rds []*syntax.Redirect) string {
	start, end := c.Pos().Offset(), c.End().Offset()
	for _, rd := range rds {
		start, end = min(start, rd.Pos().Offset()), max(end, rd.End().Offset())
	}
	if start >= end || int(end) > len(r.text) {
		return ""
	}
	return r.text[start:end]
}

func (r *reader) add(c *command) {
	c.subLevel = r.inSubst
	c.inFunc = r.inFunc > 0
	c.nested = r.depth > 1
	if r.admin > 0 {
		c.admin = true
	}
	if len(r.cmds) == 0 && r.depth == 1 && r.inSubst == 0 && r.inFunc == 0 {
		c.first = true
	}
	r.cmds = append(r.cmds, c)
}

// resolve makes p absolute against cwd, expanding nothing: words are already expanded.
func resolve(cwd, p string) string {
	if p == "" {
		return cwd
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if cwd == "" {
		return ""
	}
	return filepath.Join(cwd, p)
}
