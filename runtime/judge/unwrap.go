package judge

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// progName is the program a word names, as the judge compares it: the base name, lower case
// (macOS finds SUDO as sudo), without .exe.
func progName(v string) string {
	if i := strings.LastIndexByte(v, '/'); i >= 0 {
		v = v[i+1:]
	}
	v = strings.ToLower(v)
	return strings.TrimSuffix(v, ".exe")
}

// skipOpts returns the index of the first operand after args[0]'s options. Letters in short take
// a value (attached or the next word), as do the long options named in long.
func skipOpts(args []word, short string, long ...string) int {
	i := 1
	for i < len(args) {
		a := args[i].val
		if a == "--" {
			return i + 1
		}
		if len(a) < 2 || a[0] != '-' {
			return i
		}
		i++
		if strings.HasPrefix(a, "--") {
			name := a[2:]
			if strings.Contains(name, "=") {
				continue
			}
			for _, l := range long {
				if l == name {
					i++
					break
				}
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			if strings.IndexByte(short, a[j]) >= 0 {
				if j == len(a)-1 {
					i++
				}
				break
			}
		}
	}
	return i
}

// hasFlag reports a short option letter in a cluster (-rf has r) or a long option, before "--".
func hasFlag(args []word, short string, long ...string) bool {
	for _, a := range args[1:] {
		v := a.val
		if v == "--" {
			return false
		}
		if strings.HasPrefix(v, "--") {
			name := v[2:]
			if i := strings.IndexByte(name, '='); i >= 0 {
				name = name[:i]
			}
			for _, l := range long {
				if l == name {
					return true
				}
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			for j := 1; j < len(v); j++ {
				if strings.IndexByte(short, v[j]) >= 0 {
					return true
				}
			}
		}
	}
	return false
}

// optValue is the value of a long option (--name=value or --name value) or short one (-x value, -xvalue).
func optValue(args []word, short byte, long string) (word, bool) {
	for i := 1; i < len(args); i++ {
		v := args[i].val
		if v == "--" {
			break
		}
		if long != "" {
			if v == "--"+long && i+1 < len(args) {
				return args[i+1], true
			}
			if strings.HasPrefix(v, "--"+long+"=") {
				w := args[i]
				w.val = v[len(long)+3:]
				return w, true
			}
		}
		if short != 0 && len(v) >= 2 && v[0] == '-' && v[1] == short {
			if len(v) > 2 {
				w := args[i]
				w.val = v[2:]
				return w, true
			}
			if i+1 < len(args) {
				return args[i+1], true
			}
		}
	}
	return word{}, false
}

var shells = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "rbash", "busybox-sh")

func isShell(p string) bool { _, ok := shells[p]; return ok }

// interpreters run code in a language the judge does not read; their inline-code options.
var interpreters = map[string]string{
	"python": "cm", "python2": "cm", "python3": "cm", "pypy": "cm", "pypy3": "cm",
	"node": "ep", "nodejs": "ep", "bun": "e", "deno": "", "perl": "eE", "ruby": "e", "php": "r",
	"lua": "e", "luajit": "e", "rscript": "e", "osascript": "e", "pwsh": "c", "powershell": "c",
	"awk": "", "gawk": "", "mawk": "", "nawk": "", "tclsh": "", "wish": "", "julia": "e", "irb": "",
	"jshell": "", "groovy": "e", "scala": "e", "kotlin": "e", "elixir": "e", "erl": "", "swift": "e",
}

func isInterpreter(p string) bool {
	if _, ok := interpreters[p]; ok {
		return true
	}
	// python3.12, ruby3.3 …
	if i := strings.IndexAny(p, "0123456789"); i > 0 {
		_, ok := interpreters[strings.TrimRight(p[:i], ".-")]
		return ok
	}
	return false
}

func interpreterCode(p string) string {
	if c, ok := interpreters[p]; ok {
		return c
	}
	if i := strings.IndexAny(p, "0123456789"); i > 0 {
		return interpreters[strings.TrimRight(p[:i], ".-")]
	}
	return ""
}

// run takes the wrappers off args and adds the command(s) it runs.
func (r *reader) run(cmd *command, args []word, st *state) {
	for guard := 0; guard < 32 && len(args) > 0; guard++ {
		a0 := args[0]
		if !a0.known {
			cmd.args, cmd.progUnknown = args, true
			r.add(cmd)
			return
		}
		name := progName(a0.val)
		next := -1
		switch name {
		case "sudo", "doas", "pkexec", "run0", "runuser", "sg", "sudoedit":
			cmd.admin = true
			next = skipOpts(args, "ugCDhprtTUR", "user", "group", "chdir", "host", "prompt", "role", "type", "command-timeout", "other-user", "close-from", "chroot")
			if d, ok := optValue(args, 'D', "chdir"); ok && d.known {
				cmd.cwd = resolve(cmd.cwd, d.val)
			}
			if next >= len(args) {
				if hasFlag(args, "is", "login", "shell") {
					cmd.adminShell = true
				}
				next = -1
			} else if isShell(progName(args[next].val)) || progName(args[next].val) == "su" {
				rest := args[next:]
				if !hasFlag(rest, "c", "command") && (len(rest) == 1 || strings.HasPrefix(rest[1].val, "-")) {
					cmd.adminShell = true
				}
			}
		case "su":
			cmd.admin = true
			if c, ok := optValue(args, 'c', "command"); ok {
				cmd.wrappers = append(cmd.wrappers, "su")
				cmd.args, cmd.prog, cmd.code = []word{lit("su")}, "su", true
				r.add(cmd)
				r.admin++
				r.code(c, st)
				r.admin--
				return
			}
			cmd.adminShell = true
		case "env":
			i := 1
			for i < len(args) {
				v := args[i].val
				switch {
				case v == "--":
					i++
				case v == "-u" || v == "--unset" || v == "-C" || v == "--chdir" || v == "-S" || v == "--split-string":
					if v == "-C" || v == "--chdir" {
						if i+1 < len(args) && args[i+1].known {
							cmd.cwd = resolve(cmd.cwd, args[i+1].val)
						} else {
							cmd.cwd = ""
						}
					}
					if v == "-S" || v == "--split-string" {
						if i+1 < len(args) {
							cmd.wrappers = append(cmd.wrappers, "env")
							cmd.assigns = true
							r.splitString(cmd, args[i+1], args[i+2:], st)
							return
						}
					}
					i += 2
					continue
				case strings.HasPrefix(v, "-S") || strings.HasPrefix(v, "--split-string="):
					s := args[i]
					s.val = strings.TrimPrefix(strings.TrimPrefix(v, "--split-string="), "-S")
					cmd.wrappers = append(cmd.wrappers, "env")
					cmd.assigns = true
					r.splitString(cmd, s, args[i+1:], st)
					return
				case strings.HasPrefix(v, "--chdir=") || strings.HasPrefix(v, "-C"):
					cmd.cwd = resolve(cmd.cwd, strings.TrimPrefix(strings.TrimPrefix(v, "--chdir="), "-C"))
				case strings.HasPrefix(v, "-"):
				case strings.Contains(v, "="):
					k, val, _ := strings.Cut(v, "=")
					if cmd.envs == nil {
						cmd.envs = map[string]word{}
					}
					ew := args[i]
					ew.val = val
					cmd.envs[k] = ew
				default:
					goto envDone
				}
				if v == "--" {
					goto envDone
				}
				i++
			}
		envDone:
			cmd.assigns = true
			if i < len(args) {
				next = i
			}
		case "nohup", "builtin", "unbuffer", "busybox", "chronic", "catchsegv", "proxychains", "proxychains4", "torsocks", "firejail":
			next = skipOpts(args, "")
		case "timeout", "gtimeout":
			next = skipOpts(args, "sk", "signal", "kill-after") + 1
		case "nice", "gnice":
			next = skipOpts(args, "n", "adjustment")
		case "ionice":
			next = skipOpts(args, "cnp", "class", "classdata", "pid")
		case "time", "gtime":
			next = skipOpts(args, "fo", "format", "output")
			if o, ok := optValue(args, 'o', "output"); ok {
				cmd.redirs = append(cmd.redirs, redir{op: syntax.RdrOut, target: o})
			}
		case "command":
			if hasFlag(args, "vV") {
				next = -1
			} else {
				next = skipOpts(args, "")
			}
		case "exec":
			next = skipOpts(args, "a")
		case "stdbuf", "gstdbuf":
			next = skipOpts(args, "ioe", "input", "output", "error")
		case "setsid", "caffeinate", "flatpak-spawn":
			next = skipOpts(args, "tw")
		case "xargs", "gxargs":
			next = skipOpts(args, "adEIiLlnPs", "arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var")
			cmd.extraArgs = true
			if p, ok := optValue(args[:min(next, len(args))], 'P', "max-procs"); ok && strings.TrimLeft(p.val, "0") == "" {
				cmd.xargsProcs0 = true // as many at once as it can start
			}
			if next > 1 {
				if pa := parseArgs(programOpts["xargs"], args[:min(next, len(args))]); pa != nil {
					for _, v := range pa.vals {
						if v.role&rList != 0 {
							cmd.extra = append(cmd.extra, access{w: v.w})
						}
					}
				}
			}
			if next >= len(args) {
				args = append(args[:len(args):len(args)], lit("echo"))
			}
		case "watch":
			i := skipOpts(args, "nqd", "interval", "differences")
			if i < len(args) {
				cmd.wrappers = append(cmd.wrappers, name)
				if hasFlag(args[:i], "x", "exec") {
					args = args[i:]
					continue
				}
				r.joined(cmd, args[i:], st)
				return
			}
		case "flock":
			i := skipOpts(args, "wEc", "timeout", "conflict-exit-code", "command")
			if c, ok := optValue(args, 'c', "command"); ok {
				cmd.wrappers = append(cmd.wrappers, name)
				r.code(c, st)
				return
			}
			if i < len(args) {
				next = i + 1
			}
		case "script":
			// script [options] [FILE]: the typescript goes to FILE (typescript by default).
			pa := parseArgs(programOpts["script"], args)
			for _, v := range pa.vals {
				if v.role&rWrite != 0 {
					cmd.extra = append(cmd.extra, access{w: v.w, write: true})
				}
			}
			if len(pa.ops) > 0 {
				cmd.extra = append(cmd.extra, access{w: pa.ops[0], write: true})
			}
			if c, ok := pa.value("-c", "--command"); ok {
				cmd.wrappers = append(cmd.wrappers, name)
				r.code(c, st)
				return
			}
		case "strace", "ltrace":
			// They run the program they trace; -p traces another process (traces.go).
			pa := parseArgs(programOpts[name], args)
			for _, v := range pa.vals {
				if v.role&rWrite != 0 {
					cmd.extra = append(cmd.extra, access{w: v.w, write: true})
				}
			}
			if len(pa.ops) > 0 && !pa.has("-p", "--attach") {
				next = pa.opsAt[0]
			}
		case "eval":
			cmd.wrappers = append(cmd.wrappers, name)
			r.joined(cmd, args[1:], st)
			return
		case "trap":
			if len(args) > 1 && !strings.HasPrefix(args[1].val, "-") {
				r.code(args[1], st)
			}
		case "alias":
			r.line.aliases = true
			for _, a := range args[1:] {
				if i := strings.IndexByte(a.val, '='); i > 0 {
					v := a
					v.val = a.val[i+1:]
					r.code(v, st)
				}
			}
		case "tmux":
			if len(args) > 1 {
				switch args[skipOpts(args, "LSfc")].val {
				case "new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawn-window", "run-shell", "run", "send-keys", "send":
					cmd.args, cmd.prog = args, name
					r.add(cmd)
					sub := args[skipOpts(args, "LSfc"):]
					var rest []word
					for i := 1; i < len(sub); i++ {
						v := sub[i].val
						if strings.HasPrefix(v, "-") {
							if len(v) == 2 && strings.IndexByte("tnscFelxyNEfPe", v[1]) >= 0 && i+1 < len(sub) {
								i++
							}
							continue
						}
						rest = append(rest, sub[i])
					}
					if len(rest) > 0 {
						r.joined(&command{cwd: cmd.cwd}, rest, st)
					}
					return
				}
			}
		case "screen":
			i := skipOpts(args, "SpcsTe")
			if hasFlag(args[:i], "dDmU") && i < len(args) {
				next = i
			}
		}
		if next < 0 || next >= len(args) {
			break
		}
		cmd.wrappers = append(cmd.wrappers, name)
		args = args[next:]
	}
	if len(args) == 0 {
		r.add(cmd)
		return
	}
	cmd.args = args
	if !args[0].known {
		cmd.progUnknown = true
		r.add(cmd)
		return
	}
	cmd.prog = progName(args[0].val)
	for _, f := range r.funcs {
		if f == cmd.prog {
			cmd.fn = true
		}
	}
	if cmd.fn {
		// A function of the line ran: what it sets is unknown after it, and so is the folder
		// if it changes folder.
		st.taint(r.funcSets[cmd.prog])
		if r.funcCd[cmd.prog] {
			st.cwd = ""
		}
	}
	if isTar(cmd.prog) {
		cmd.args = tarDashes(cmd.args)
	}
	r.builtinState(cmd, st)
	r.options(cmd, st)
	if cmd.prog == "sed" || cmd.prog == "gsed" {
		r.sedCode(cmd, st)
	}
	if cmd.prog == "ssh" || cmd.prog == "scp" || cmd.prog == "sftp" || cmd.prog == "autossh" {
		r.sshCode(cmd, st)
	}
	r.envCode(cmd, st)
	r.makesLinks(cmd)
	if cmd.prog == "git" {
		r.gitCode(cmd, st)
	}
	switch {
	case isShell(cmd.prog):
		r.shell(cmd, st)
		return
	case isInterpreter(cmd.prog):
		r.interpreter(cmd)
	case cmd.prog == "source" || cmd.prog == ".":
		cmd.script = 1
		if len(args) > 1 && args[1].download {
			r.line.downloadExec = true
		}
		if len(args) > 1 {
			r.scriptOperand(cmd, args[1])
		}
	case cmd.prog == "find":
		r.find(cmd, st)
		return
	case cmd.prog == "cd" || cmd.prog == "pushd" || cmd.prog == "popd" || cmd.prog == "chdir":
		r.add(cmd)
		r.cd(cmd, st)
		return
	}
	if cmd.stdinText != nil && (cmd.stdinScript && !isShell(cmd.prog) || stdinConfig(cmd)) {
		// python3 <<EOF …: code (or a config) the judge does not read, given on standard input.
		cmd.inline = append(cmd.inline, *cmd.stdinText)
	}
	r.add(cmd)
	r.stdinFromRedirect(cmd)
}

// stdinConfig reports a program reading its options or addresses from standard input
// (curl -K -, wget -i -).
func stdinConfig(cmd *command) bool {
	pa := cmd.opts()
	if pa == nil {
		return false
	}
	for _, v := range pa.vals {
		if v.w.val == "-" && (v.name == "-K" || v.name == "--config" || v.name == "-i" || v.name == "--input-file") {
			return true
		}
	}
	return false
}

// splitString reads env -S "…": the string is split into words again.
func (r *reader) splitString(cmd *command, s word, rest []word, st *state) {
	if !s.known {
		if s.download {
			r.line.downloadExec = true
		}
		r.problem("it passes `env -S` words Ensemble cannot read")
		cmd.args, cmd.progUnknown = []word{s}, true
		r.add(cmd)
		return
	}
	text := s.val
	for _, w := range rest {
		text += " " + shellQuote(w)
	}
	r.admin += b2i(cmd.admin)
	r.reread("env "+text, &state{cwd: cmd.cwd}, false)
	r.admin -= b2i(cmd.admin)
}

// joined reads words joined by spaces as a shell line, as eval does.
func (r *reader) joined(cmd *command, ws []word, st *state) {
	var parts []string
	for _, w := range ws {
		if !w.known {
			if w.download {
				r.line.downloadExec = true
			}
			r.problem("it builds a command from parts only known when it runs")
			cmd.args, cmd.progUnknown = ws, true
			r.add(cmd)
			return
		}
		parts = append(parts, w.val)
	}
	r.admin += b2i(cmd.admin)
	r.reread(strings.Join(parts, " "), st, false)
	r.admin -= b2i(cmd.admin)
}

// code reads a string a shell runs (sh -c STRING, su -c, trap, alias).
func (r *reader) code(w word, st *state) {
	if w.download {
		r.line.downloadExec = true
	}
	if !w.known {
		r.problem("it runs a command built from parts only known when it runs")
		return
	}
	r.reread(w.val, st.copy(), false)
}

func shellQuote(w word) string {
	return "'" + strings.ReplaceAll(w.val, "'", `'\''`) + "'"
}

// shell handles sh, bash, zsh …: -c STRING is read again, a script file is run, otherwise the
// program comes on standard input.
func (r *reader) shell(cmd *command, st *state) {
	args := cmd.args
	i, hasC := 1, false
	for i < len(args) {
		a := args[i].val
		if a == "--" || a == "-" {
			i++
			break
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		if a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file" {
			i += 2
			continue
		}
		if a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], 'c') >= 0 {
			hasC = true
		}
		i++
	}
	cmd.code = true
	switch {
	case hasC:
		r.add(cmd)
		if i < len(args) {
			r.admin += b2i(cmd.admin)
			r.code(args[i], &state{cwd: cmd.cwd})
			r.admin -= b2i(cmd.admin)
		}
	case i < len(args):
		cmd.code = false
		cmd.script = i
		if args[i].download {
			r.line.downloadExec = true
		}
		r.add(cmd)
		r.scriptOperand(cmd, args[i])
		r.stdinFromRedirect(cmd)
	default:
		cmd.stdinScript = true
		r.add(cmd)
		r.stdinFromRedirect(cmd)
	}
}

// scriptOperand reads a script a shell or source runs that is not a file: the text a process
// substitution prints (bash <(echo …)), read again when the judge can tell it and asked about
// when not; and standard input (bash /dev/stdin <<< …, source /dev/stdin), read like bash's own.
func (r *reader) scriptOperand(cmd *command, w word) {
	switch {
	case w.proc && w.printedOK:
		r.admin += b2i(cmd.admin)
		r.reread(w.printed, &state{cwd: cmd.cwd}, false)
		r.admin -= b2i(cmd.admin)
	case w.proc:
		if !w.download {
			r.problem("it runs the code another command prints, which Ensemble cannot read before it runs")
		}
	case w.known && (w.val == "/dev/stdin" || w.val == "/dev/fd/0" || w.val == "/proc/self/fd/0" || w.val == "-" && cmd.prog != "source" && cmd.prog != "."):
		cmd.stdinScript = true
	}
}

// stdinFromRedirect reads a script given to an interpreter by a here-document or here-string.
func (r *reader) stdinFromRedirect(cmd *command) {
	if !cmd.stdinScript || cmd.stdinText == nil {
		return
	}
	t := cmd.stdinText
	if t.download {
		r.line.downloadExec = true
	}
	if !isShell(cmd.prog) && cmd.prog != "source" && cmd.prog != "." {
		return // inline code in another language: follows the mode
	}
	if !t.known {
		r.problem("it feeds `" + cmd.prog + "` a script with parts only known when it runs")
		return
	}
	r.admin += b2i(cmd.admin)
	r.reread(t.val, &state{cwd: cmd.cwd}, false)
	r.admin -= b2i(cmd.admin)
}

// interpreter marks inline code (python -c, node -e) and the script an interpreter runs.
func (r *reader) interpreter(cmd *command) {
	codeOpts := interpreterCode(cmd.prog)
	args := cmd.args
	if cmd.prog == "deno" || cmd.prog == "bun" {
		if len(args) > 1 && (args[1].val == "eval" || args[1].val == "-e" || args[1].val == "--eval") {
			cmd.code = true
			cmd.inline = append(cmd.inline, args[2:]...)
			return
		}
	}
	if strings.HasPrefix(cmd.prog, "awk") || strings.HasSuffix(cmd.prog, "awk") {
		// awk's program is inline code; the operands after it are files it reads (accesses).
		if pa := cmd.opts(); pa != nil {
			for _, v := range pa.vals {
				if v.role&rPattern != 0 && v.role&rRead == 0 {
					cmd.inline = append(cmd.inline, v.w)
				}
			}
			if !pa.pattern && len(pa.ops) > 0 {
				cmd.inline = append(cmd.inline, pa.ops[0])
			}
		}
		return
	}
	for i := 1; i < len(args); i++ {
		a := args[i].val
		if a == "-" {
			cmd.stdinScript = true // python3 - reads its program from standard input
			return
		}
		if a == "--" {
			if i+1 < len(args) {
				cmd.script = i + 1
			}
			return
		}
		if len(a) > 1 && a[0] == '-' {
			if a[1] != '-' && strings.IndexByte(codeOpts, a[1]) >= 0 {
				cmd.code = true
				if k := strings.IndexByte(a[1:], a[1]) + 2; k < len(a) {
					w := args[i]
					w.val = a[k:]
					cmd.inline = append(cmd.inline, w)
				} else if i+1 < len(args) {
					cmd.inline = append(cmd.inline, args[i+1])
				}
				return
			}
			if a == "--eval" || a == "--print" || a == "-Command" || a == "-command" || a == "-EncodedCommand" {
				cmd.code = true
				if i+1 < len(args) {
					cmd.inline = append(cmd.inline, args[i+1])
				}
				return
			}
			continue
		}
		if args[i].download {
			r.line.downloadExec = true
		}
		cmd.script = i
		return
	}
	cmd.stdinScript = true
}

// findDeleters are the programs that, run by find -exec on what it finds, delete it.
var findDeleters = map[string]bool{"rm": true, "grm": true, "unlink": true, "shred": true, "rmdir": true}

// find reads find's starting points and its -exec commands.
func (r *reader) find(cmd *command, st *state) {
	args := cmd.args
	for i := 1; i < len(args); i++ {
		switch args[i].val {
		case "-L", "-H", "-follow":
			cmd.findFollow = true
		case "-delete":
			cmd.findDelete = true
		case "-exec", "-execdir", "-ok", "-okdir":
			cmd.findExec = true
			j := i + 1
			for j < len(args) && args[j].val != ";" && args[j].val != "+" {
				j++
			}
			inner := make([]word, 0, j-i-1)
			for _, w := range args[i+1 : j] {
				if strings.Contains(w.val, "{}") {
					w.val = strings.ReplaceAll(w.val, "{}", unknown)
					w.known, w.found = false, true
				}
				inner = append(inner, w)
			}
			if len(inner) > 0 && inner[0].known && findDeleters[progName(inner[0].val)] {
				// -exec rm {} deletes what find finds, as -delete does: the floor reads it so.
				cmd.findDelete = true
			}
			if len(inner) > 0 {
				sub := &command{cwd: cmd.cwd, extraArgs: true, admin: cmd.admin, wrappers: []string{"find"}}
				defer r.run(sub, inner, st)
			}
			i = j
		}
	}
	r.add(cmd)
}

// cd moves the shell's folder for the commands after it.
func (r *reader) cd(cmd *command, st *state) {
	if cmd.prog == "popd" {
		st.cwd = ""
		return
	}
	i := skipOpts(cmd.args, "")
	if i >= len(cmd.args) {
		st.cwd = r.homeIn(st)
		if st.cwd == unknown {
			st.cwd = ""
		}
		return
	}
	t := cmd.args[i]
	if !t.known || t.val == "-" || t.glob {
		st.cwd = ""
		return
	}
	_, cdpath := cmd.envs["CDPATH"]
	if _, set := st.vars["CDPATH"]; set {
		cdpath = true
	}
	if cdpath && !strings.HasPrefix(t.val, "/") && !strings.HasPrefix(t.val, "./") && !strings.HasPrefix(t.val, "../") && t.val != "." && t.val != ".." {
		st.cwd = "" // CDPATH may send a relative cd anywhere
		return
	}
	st.cwd = resolve(st.cwd, t.val)
}

func set(names ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}
