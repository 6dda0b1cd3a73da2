package judge

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Fork bombs, in the spellings the judge can recognise soundly:
//   - functions that call themselves, directly or through one another, where one of them starts a
//     job in the background or a pipeline (:(){ :|:& };:, bomb(){ bomb|bomb& }, a(){ b& }; b(){ a& });
//   - the shell running itself again in the background or a pipe ($0 & $0, $0|$0);
//   - a loop that never ends and starts a job in the background each time round without waiting
//     for it (while true; do sleep 1 & done, until false; do $0 & done, for ((;;)); do x & done);
//   - inline code that forks in a loop (perl -e 'fork while fork', python -c 'while 1: os.fork()').

// spawns reports a body that starts a job in the background or a pipeline.
func spawns(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.Stmt:
			if m.Background || m.Coprocess || m.Disown {
				found = true
			}
		case *syntax.BinaryCmd:
			if m.Op == syntax.Pipe || m.Op == syntax.PipeAll {
				found = true
			}
		}
		return !found
	})
	return found
}

// waits reports a body that waits for its jobs.
func waits(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(m syntax.Node) bool {
		if c, ok := m.(*syntax.CallExpr); ok && len(c.Args) > 0 && c.Args[0].Lit() == "wait" {
			found = true
		}
		return !found
	})
	return found
}

// callsIn are the names of the commands a body calls.
func callsIn(n syntax.Node) []string {
	var out []string
	syntax.Walk(n, func(m syntax.Node) bool {
		if c, ok := m.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			if l := c.Args[0].Lit(); l != "" {
				out = append(out, strings.ToLower(l))
			}
		}
		return true
	})
	return out
}

// recursiveSpawn reports a function of the line that reaches itself through the functions it
// calls, where one of those on the way starts jobs: the fork bomb in any naming.
func (r *reader) recursiveSpawn() bool {
	if len(r.funcBody) == 0 {
		return false
	}
	calls := map[string][]string{}
	spawning := map[string]bool{}
	for name, body := range r.funcBody {
		calls[name] = callsIn(body)
		spawning[name] = spawns(body)
	}
	for start := range r.funcBody {
		// Walk from start; a path back to start through a spawning function is a bomb.
		type step struct {
			name  string
			spawn bool
		}
		seen := map[string]bool{}
		stack := []step{{start, spawning[start]}}
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, c := range calls[s.name] {
				if _, ok := r.funcBody[c]; !ok {
					continue
				}
				sp := s.spawn || spawning[c]
				if c == start && sp {
					return true
				}
				key := c
				if sp {
					key += "\x00"
				}
				if !seen[key] {
					seen[key] = true
					stack = append(stack, step{c, sp})
				}
			}
		}
	}
	return false
}

// alwaysTrue reports a loop condition that is plainly always true or always false.
func alwaysTrue(cond []*syntax.Stmt) (value, known bool) {
	if len(cond) != 1 {
		return false, false
	}
	switch c := cond[0].Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return false, false
		}
		switch c.Args[0].Lit() {
		case "true", ":":
			return true, len(c.Args) >= 1
		case "false":
			return false, true
		case "[", "test":
			if len(c.Args) >= 2 {
				l := c.Args[1].Lit()
				return l != "" && l != "]", l != "" && (len(c.Args) == 2 || len(c.Args) == 3 && c.Args[2].Lit() == "]")
			}
		}
	case *syntax.ArithmCmd:
		if n, ok := arith(c.X); ok {
			return n != 0, true
		}
	}
	return false, false
}

// infiniteLoop marks a while or until loop that never ends and leaves jobs behind each time round.
func (r *reader) infiniteLoop(c *syntax.WhileClause) {
	v, ok := alwaysTrue(c.Cond)
	r.infiniteLoopBody(ok && v != c.Until, c.Do)
}

func (r *reader) infiniteLoopBody(forever bool, body []*syntax.Stmt) {
	if !forever {
		return
	}
	for _, s := range body {
		if background(s) && !waitsAll(body) {
			r.line.fork = true
			return
		}
	}
}

// background reports a statement that leaves a job running (cmd &, or inside a group or subshell).
func background(s *syntax.Stmt) bool {
	found := false
	syntax.Walk(s, func(m syntax.Node) bool {
		if st, ok := m.(*syntax.Stmt); ok && (st.Background || st.Coprocess) {
			found = true
		}
		if _, ok := m.(*syntax.FuncDecl); ok {
			return false
		}
		return !found
	})
	return found
}

func waitsAll(body []*syntax.Stmt) bool {
	for _, s := range body {
		if waits(s) {
			return true
		}
	}
	return false
}

// selfName reports a command word that is the shell itself: $0, "$0", ${0}.
func selfName(w *syntax.Word) bool {
	if w == nil || len(w.Parts) != 1 {
		return false
	}
	p := w.Parts[0]
	if dq, ok := p.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		p = dq.Parts[0]
	}
	pe, ok := p.(*syntax.ParamExp)
	return ok && pe.Param != nil && pe.Param.Value == "0" && pe.Exp == nil && pe.Slice == nil && pe.Repl == nil && !pe.Length
}

var (
	forkCode    = regexp.MustCompile(`\bfork\b`)
	loopCode    = regexp.MustCompile(`\b(while|until|loop|for\s*\(\s*;\s*;\s*\)|repeat)\b|\bfor\s*\(\s*;\s*;`)
	spawnCode   = regexp.MustCompile(`\b(spawn|Popen)\s*\(`) // those that do not wait
	foreverCode = regexp.MustCompile(`\bwhile\s*\(?\s*(true|True|1|!0)\s*\)?|\bfor\s*\(\s*;\s*;\s*\)|\bloop\s*(do|\{)`)
)

// forksInCode reports inline code that forks in a loop, or starts programs in a loop that never ends.
func forksInCode(code string) bool {
	return forkCode.MatchString(code) && loopCode.MatchString(code) || spawnCode.MatchString(code) && foreverCode.MatchString(code)
}
