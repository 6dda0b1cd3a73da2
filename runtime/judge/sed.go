package judge

import "strings"

// sed's scripts can read files (r, R), write them (w, W, s///w) and run commands (e, s///e). The
// judge reads sed's script like sed does and judges what it names; a script it cannot read, or
// one that runs what it edits (e alone, s///e), is asked about.

type sedNames struct {
	reads, writes, runs []string
	opaque              bool // runs code the judge cannot see (e with no command, s///e)
}

// sedScript reads one sed script; ok is false when it is not one the judge can read.
func sedScript(s string) (out sedNames, ok bool) {
	i := 0
	n := len(s)
	toEOL := func() string {
		j := i
		for j < n && s[j] != '\n' {
			j++
		}
		v := s[i:j]
		i = j
		return v
	}
	skipSpace := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// delimited reads up to an unescaped delim, from i; false if it never ends.
	delimited := func(d byte) bool {
		for i < n {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
			case '\n':
				if d != '\n' {
					return false
				}
			}
			i++
		}
		return false
	}
	address := func() bool {
		switch {
		case i < n && s[i] >= '0' && s[i] <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < n && s[i] == '$':
			i++
		case i < n && s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
		case i+1 < n && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
		case i < n && (s[i] == '+' || s[i] == '~'):
			i++
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		default:
			return true
		}
		for i < n && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for guard := 0; i < n && guard < 10000; guard++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '}' || c == '{' && i > 0 {
			i++
			continue
		}
		if c == '#' {
			toEOL()
			continue
		}
		if !address() {
			return out, false
		}
		skipSpace()
		if i < n && s[i] == ',' {
			i++
			skipSpace()
			if !address() {
				return out, false
			}
		}
		skipSpace()
		for i < n && (s[i] == '!' || s[i] == ' ') {
			i++
		}
		if i >= n {
			return out, false
		}
		c = s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'x', 'n', 'N', 'p', 'P', 'z', 'F':
		case 's':
			if i >= n {
				return out, false
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return out, false
			}
			for i < n {
				f := s[i]
				switch {
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9':
					i++
					continue
				case f == 'e':
					out.opaque = true
					i++
					continue
				case f == 'w':
					i++
					skipSpace()
					out.writes = append(out.writes, toEOL())
				}
				break
			}
		case 'y':
			if i >= n {
				return out, false
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return out, false
			}
		case 'a', 'i', 'c':
			for {
				line := toEOL()
				if !strings.HasSuffix(line, "\\") || i >= n {
					break
				}
				i++
			}
		case 'r', 'R':
			skipSpace()
			out.reads = append(out.reads, toEOL())
		case 'w', 'W':
			skipSpace()
			out.writes = append(out.writes, toEOL())
		case 'e':
			skipSpace()
			if cmd := strings.TrimSpace(toEOL()); cmd != "" {
				out.runs = append(out.runs, cmd)
			} else {
				out.opaque = true
			}
		case 'b', 't', 'T', ':', 'v':
			for i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				i++
			}
		case 'q', 'Q', 'l', 'L':
			skipSpace()
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		default:
			return out, false
		}
	}
	return out, true
}

// sedCode reads the scripts sed is given inline: the files they name are judged, the commands
// they run are read as commands.
func (r *reader) sedCode(cmd *command, st *state) {
	pa := cmd.opts()
	if pa == nil || pa.has("--sandbox") {
		return
	}
	var scripts []word
	for _, v := range pa.vals {
		if v.role&rPattern != 0 && v.role&rRead == 0 {
			scripts = append(scripts, v.w)
		}
	}
	if !pa.pattern && len(pa.ops) > 0 {
		scripts = append(scripts, pa.ops[0])
	}
	for _, w := range scripts {
		if !w.known {
			cmd.opaque = append(cmd.opaque, "a sed script only known when it runs")
			continue
		}
		names, ok := sedScript(w.val)
		if !ok {
			cmd.opaque = append(cmd.opaque, "a sed script Ensemble cannot read")
			continue
		}
		if names.opaque {
			cmd.opaque = append(cmd.opaque, "a sed script that runs what it edits as commands")
		}
		for _, f := range names.reads {
			cmd.extra = append(cmd.extra, access{w: lit(f)})
		}
		for _, f := range names.writes {
			cmd.extra = append(cmd.extra, access{w: lit(f), write: true})
		}
		for _, c := range names.runs {
			cmd.runs = true
			r.code(lit(c), st)
		}
	}
}

// sshCode reads the local commands ssh's -o options run (ProxyCommand, LocalCommand,
// KnownHostsCommand) as commands of their own.
func (r *reader) sshCode(cmd *command, st *state) {
	a := cmd.args
	for i := 1; i < len(a); i++ {
		v := a[i]
		switch {
		case v.val == "-o" && i+1 < len(a):
			i++
			v = a[i]
		case strings.HasPrefix(v.val, "-o") && len(v.val) > 2:
			v.val = v.val[2:]
		default:
			continue
		}
		key, val, ok := strings.Cut(v.val, "=")
		if !ok {
			key, val, _ = strings.Cut(v.val, " ")
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "proxycommand", "localcommand", "knownhostscommand", "permitlocalcommand":
			if strings.TrimSpace(val) == "" || strings.EqualFold(strings.TrimSpace(val), "none") || strings.EqualFold(strings.TrimSpace(val), "yes") || strings.EqualFold(strings.TrimSpace(val), "no") {
				continue
			}
			cmd.runs = true
			w := v
			w.val = strings.TrimSpace(val)
			r.code(w, st)
		}
	}
}
