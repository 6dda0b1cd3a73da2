package judge

import (
	"regexp"
	"strings"
)

// Inline code (python -c, node -e, awk's program, vim -c) is in a language the judge does not
// read, and follows the mode: the OS sandbox confines what it does. But a path written plainly in
// it is judged where the zones refuse it: a script that opens ~/.ssh/id_ed25519 or Ensemble's data
// is refused like cat would be.

// fileURLInCode is a file: address, whose path is a path like any other.
var fileURLInCode = regexp.MustCompile(`(?i)file:(//[^/\s'"]*)?`)

var pathInCode = regexp.MustCompile(`(?:~|\$\{?HOME\}?)?/[^\s'"()\[\]{}<>|;&,` + "`" + `\\` + "\x00" + `]+`)

// maxInline is how much of one piece of inline code the judge looks through.
const maxInline = 16 << 10

func (j *judgement) inlinePaths(c *command) []access {
	var out []access
	if c.code && isInterpreter(c.prog) {
		// python3 -c 'open(sys.argv[1])' FILE: the words after the code are likely its files.
		for _, a := range c.args[1:] {
			if a.known && !strings.HasPrefix(a.val, "-") && strings.ContainsAny(a.val, "/.") && !containsWord(c.inline, a) {
				out = append(out, access{w: a, mention: true})
			}
		}
	}
	for _, w := range c.inline {
		v := w.val
		if len(v) > maxInline {
			v = v[:maxInline]
		}
		if strings.Contains(strings.ToLower(v), "file:") {
			v = fileURLInCode.ReplaceAllString(v, " ")
		}
		for _, loc := range pathInCode.FindAllStringIndex(v, 64) {
			if loc[0] > 0 {
				prev := v[loc[0]-1]
				if prev == ':' || prev == '/' || prev == '.' || prev == '_' || prev == '-' || prev >= '0' && prev <= '9' || prev >= 'a' && prev <= 'z' || prev >= 'A' && prev <= 'Z' {
					continue // a/b, http://…, ./x: not a path from the root
				}
			}
			m := v[loc[0]:loc[1]]
			switch {
			case strings.HasPrefix(m, "~"):
				m = j.s.Home + m[1:]
			case strings.HasPrefix(m, "${HOME}"):
				m = j.s.Home + m[len("${HOME}"):]
			case strings.HasPrefix(m, "$HOME"):
				m = j.s.Home + m[len("$HOME"):]
			}
			if !strings.HasPrefix(m, "/") {
				continue
			}
			x := lit(m)
			x.glob = strings.ContainsAny(m, "*?")
			out = append(out, access{w: x, mention: true})
		}
	}
	return out
}

func containsWord(ws []word, w word) bool {
	for _, x := range ws {
		if x.val == w.val {
			return true
		}
	}
	return false
}
