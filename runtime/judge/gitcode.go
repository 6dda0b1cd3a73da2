package judge

import (
	"strings"
)

// Git runs code from its configuration and from some options: a pager, an editor, diff and merge
// drivers, textconv and filters, fsmonitor, credential helpers, ssh, hooks, aliases starting with
// "!", rebase --exec, submodule foreach and more. The judge reads each such command as a command
// of its own (the floor and the zones apply to it), asks about what it cannot read (a hooks
// folder, an included config file, another transport allowed), and a git command with any of
// them is never a quiet read.

// gitKey is what a git config key's value is.
type gitKey uint8

const (
	gitKeyPlain    gitKey = iota
	gitKeyShell           // a command git runs through the shell
	gitKeyOpaque          // brings in code the judge cannot read (a hooks folder, more config)
	gitKeyFile            // a file git reads
	gitKeyWrite           // a file git writes
	gitKeyAlias           // an alias: "!…" is a shell command
	gitKeyWorkTree        // moves the work tree elsewhere
)

// gitKeyKind classifies a config key (section[.subsection].name, any case).
func gitKeyKind(key string) gitKey {
	k := strings.ToLower(strings.TrimSpace(key))
	sec, rest, _ := strings.Cut(k, ".")
	name := rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		name = rest[i+1:]
	}
	sub := rest != name // there is a subsection
	switch sec {
	case "alias":
		return gitKeyAlias
	case "pager":
		return gitKeyShell
	case "include":
		return gitKeyOpaque
	case "includeif":
		return gitKeyOpaque
	case "filter":
		if name == "clean" || name == "smudge" || name == "process" {
			return gitKeyShell
		}
	case "diff":
		if name == "external" || name == "command" || name == "textconv" {
			return gitKeyShell
		}
	case "merge":
		if sub && name == "driver" {
			return gitKeyShell
		}
	case "mergetool", "difftool", "guitool":
		if name == "cmd" || name == "path" {
			return gitKeyShell
		}
	case "credential":
		if name == "helper" {
			return gitKeyShell
		}
	case "gpg":
		if name == "program" {
			return gitKeyShell
		}
		if name == "allowedsignersfile" {
			return gitKeyFile
		}
	case "sequence":
		if name == "editor" {
			return gitKeyShell
		}
	case "interactive":
		if name == "difffilter" {
			return gitKeyShell
		}
	case "uploadpack":
		if name == "packobjectshook" {
			return gitKeyShell
		}
	case "sendemail":
		if name == "smtpserver" || name == "tocmd" || name == "cccmd" || name == "headercmd" || name == "sendmailcmd" {
			return gitKeyShell
		}
	case "imap":
		if name == "tunnel" {
			return gitKeyShell
		}
	case "man", "browser", "web", "instaweb":
		if name == "cmd" || name == "path" || name == "browser" || name == "httpd" {
			return gitKeyShell
		}
	case "tar":
		if name == "command" {
			return gitKeyShell
		}
	case "remote":
		if name == "uploadpack" || name == "receivepack" || name == "vcs" {
			return gitKeyShell
		}
	case "submodule":
		if name == "update" {
			return gitKeyShell
		}
	case "protocol":
		if name == "allow" {
			return gitKeyOpaque
		}
	case "init":
		if name == "templatedir" {
			return gitKeyOpaque
		}
	case "trace2":
		if strings.HasSuffix(name, "target") {
			return gitKeyWrite
		}
	case "commit":
		if name == "template" {
			return gitKeyFile
		}
	case "blame":
		if name == "ignorerevsfile" {
			return gitKeyFile
		}
	case "mailmap":
		if name == "file" {
			return gitKeyFile
		}
	case "http":
		switch name {
		case "sslcert", "sslkey", "sslcainfo", "sslcapath", "cookiefile", "proxysslcert", "proxysslkey", "proxysslcainfo":
			return gitKeyFile
		}
	case "user":
		if name == "signingkey" {
			return gitKeyFile
		}
	case "core":
		switch name {
		case "pager", "editor", "sshcommand", "gitproxy", "askpass", "fsmonitor", "alternaterefscommand":
			return gitKeyShell
		case "hookspath":
			return gitKeyOpaque
		case "worktree":
			return gitKeyWorkTree
		case "excludesfile", "attributesfile":
			return gitKeyFile
		}
	}
	return gitKeyPlain
}

// gitKeyRunsCode reports a key whose value runs or brings in code.
func gitKeyRunsCode(key, value string) bool {
	switch gitKeyKind(key) {
	case gitKeyShell, gitKeyOpaque, gitKeyWorkTree:
		v := strings.ToLower(strings.TrimSpace(value))
		k := strings.ToLower(key)
		if v == "" {
			return false // unset: git runs nothing of it
		}
		if k == "core.fsmonitor" && (v == "false" || v == "0" || v == "no" || v == "off" || v == "" || v == "true" || v == "1" || v == "yes" || v == "on") {
			return false // off, or git's own fsmonitor daemon
		}
		if strings.HasPrefix(k, "submodule.") && strings.HasSuffix(k, ".update") && !strings.HasPrefix(v, "!") {
			return false // checkout, rebase, merge, none
		}
		if k == "core.hookspath" && v == "/dev/null" {
			return false
		}
		if strings.HasPrefix(k, "protocol.") && (v == "never" || v == "") {
			return false
		}
		return true
	case gitKeyAlias:
		return strings.HasPrefix(strings.TrimSpace(value), "!")
	}
	return false
}

// gitConfigPair judges one key=value git is given (-c, GIT_CONFIG_KEY_n, a config write).
func (r *reader) gitConfigPair(cmd *command, key, value word, st *state) {
	if !key.known {
		cmd.opaque = append(cmd.opaque, "a config key only known when it runs")
		return
	}
	kind := gitKeyKind(key.val)
	v := strings.TrimSpace(value.val)
	if kind != gitKeyShell && kind != gitKeyAlias && strings.HasPrefix(v, "~/") {
		// git expands ~/ in the values of its path keys.
		value.val = r.homeIn(st) + v[1:]
		v = value.val
	}
	switch kind {
	case gitKeyShell:
		if !gitKeyRunsCode(key.val, v) {
			return
		}
		cmd.runs = true
		if strings.EqualFold(key.val, "credential.helper") || strings.HasSuffix(strings.ToLower(key.val), ".helper") {
			// "!cmd" is a shell line; a name is git's own helper git-credential-NAME; a path a program.
			if !strings.HasPrefix(v, "!") && !strings.ContainsAny(v, "/ ") {
				return
			}
		}
		value.val = strings.TrimPrefix(v, "!")
		if value.val != "" {
			r.code(value, st)
		}
	case gitKeyAlias:
		if strings.HasPrefix(v, "!") {
			cmd.runs = true
			value.val = strings.TrimPrefix(v, "!")
			r.code(value, st)
		}
	case gitKeyOpaque:
		if !gitKeyRunsCode(key.val, v) {
			return
		}
		cmd.runs = true
		cmd.opaque = append(cmd.opaque, "`"+key.val+"` brings in code or settings Ensemble cannot read")
		if strings.HasPrefix(strings.ToLower(key.val), "include") || strings.EqualFold(key.val, "core.hooksPath") {
			cmd.extra = append(cmd.extra, access{w: value})
		}
	case gitKeyWorkTree:
		cmd.runs = true
		cmd.extra = append(cmd.extra, access{w: value, write: true})
	case gitKeyFile:
		cmd.runs = true
		cmd.extra = append(cmd.extra, access{w: value})
	case gitKeyWrite:
		cmd.runs = true
		if v != "" && v != "0" && v != "1" && v != "true" && v != "false" {
			cmd.extra = append(cmd.extra, access{w: value, write: true})
		}
	}
}

// gitConfigParameters reads GIT_CONFIG_PARAMETERS: 'key'='value' pairs.
func (r *reader) gitConfigParameters(cmd *command, w word, st *state) {
	if !w.known {
		cmd.opaque = append(cmd.opaque, "config only known when it runs")
		return
	}
	rest := w.val
	for rest != "" {
		rest = strings.TrimLeft(rest, " ")
		k, after, ok := quotedPart(rest)
		if !ok {
			cmd.opaque = append(cmd.opaque, "config Ensemble cannot read")
			return
		}
		val := ""
		if strings.HasPrefix(after, "=") {
			val, after, ok = quotedPart(after[1:])
			if !ok {
				cmd.opaque = append(cmd.opaque, "config Ensemble cannot read")
				return
			}
		} else if kk, vv, found := strings.Cut(k, "="); found {
			k, val = kk, vv
		}
		r.gitConfigPair(cmd, lit(k), lit(val), st)
		rest = after
	}
}

// quotedPart reads one '…'-quoted part, with '\” for a quote.
func quotedPart(s string) (string, string, bool) {
	if !strings.HasPrefix(s, "'") {
		return "", s, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if strings.HasPrefix(s[i:], `'\''`) {
				b.WriteByte('\'')
				i += 3
				continue
			}
			return b.String(), s[i+1:], true
		}
		b.WriteByte(s[i])
	}
	return "", "", false
}

// gitCode reads what a git command runs: -c pairs and --config-env before the subcommand, code
// options of the subcommand, and config writes of code-running keys.
func (r *reader) gitCode(cmd *command, st *state) {
	a := cmd.args
	i := 1
	for i < len(a) {
		v := a[i].val
		if !strings.HasPrefix(v, "-") {
			break
		}
		switch {
		case v == "-c" && i+1 < len(a):
			k, val, _ := strings.Cut(a[i+1].val, "=")
			kw, vw := a[i+1], a[i+1]
			kw.val, vw.val = k, val
			kw.known = !strings.Contains(k, unknown)
			vw.known = !strings.Contains(val, unknown)
			r.gitConfigPair(cmd, kw, vw, st)
			i += 2
			continue
		case v == "--config-env" || strings.HasPrefix(v, "--config-env="):
			spec := strings.TrimPrefix(v, "--config-env=")
			if v == "--config-env" && i+1 < len(a) {
				spec = a[i+1].val
				i++
			}
			k, _, _ := strings.Cut(spec, "=")
			r.gitConfigPair(cmd, lit(k), word{val: unknown, computed: true}, st)
		case v == "--exec-path" && i+1 < len(a) || strings.HasPrefix(v, "--exec-path="):
			cmd.runs = true
			cmd.opaque = append(cmd.opaque, "`--exec-path` runs git's programs from another folder")
			if v == "--exec-path" {
				i++
			}
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--super-prefix":
			i += 2
			continue
		}
		i++
	}
	if i >= len(a) {
		return
	}
	sub := a[i].val
	rest := a[i+1:]
	shellOpt := func(w word) {
		cmd.runs = true
		r.code(w, st)
	}
	for j := 0; j < len(rest); j++ {
		v := rest[j].val
		next := func() (word, bool) {
			if j+1 < len(rest) {
				j++
				return rest[j], true
			}
			return word{}, false
		}
		attached := func(long string) (word, bool) {
			if strings.HasPrefix(v, long+"=") {
				w := rest[j]
				w.val = v[len(long)+1:]
				return w, true
			}
			return word{}, false
		}
		if v == "--" {
			break
		}
		switch sub {
		case "rebase":
			if v == "-x" || v == "--exec" {
				if w, ok := next(); ok {
					shellOpt(w)
				}
			} else if w, ok := attached("--exec"); ok {
				shellOpt(w)
			} else if strings.HasPrefix(v, "-x") && len(v) > 2 {
				w := rest[j]
				w.val = v[2:]
				shellOpt(w)
			}
		case "difftool", "mergetool":
			if v == "-x" || v == "--extcmd" {
				if w, ok := next(); ok {
					shellOpt(w)
				}
			} else if w, ok := attached("--extcmd"); ok {
				shellOpt(w)
			} else if v == "-t" || v == "--tool" || strings.HasPrefix(v, "--tool=") || v == "-g" || v == "--gui" {
				cmd.runs = true
			}
			cmd.runs = true
		case "grep":
			if v == "-O" || v == "--open-files-in-pager" {
				cmd.runs = true
			} else if strings.HasPrefix(v, "-O") && len(v) > 2 {
				w := rest[j]
				w.val = v[2:]
				shellOpt(w)
			} else if w, ok := attached("--open-files-in-pager"); ok {
				shellOpt(w)
			}
		case "filter-branch":
			switch v {
			case "--tree-filter", "--index-filter", "--env-filter", "--msg-filter", "--commit-filter", "--parent-filter", "--tag-name-filter", "--setup":
				if w, ok := next(); ok {
					shellOpt(w)
				}
			}
			cmd.runs = true
		case "fetch", "pull", "clone", "ls-remote", "archive", "push", "send-pack", "fetch-pack":
			for _, long := range []string{"--upload-pack", "--receive-pack", "--exec"} {
				if v == long {
					if w, ok := next(); ok {
						shellOpt(w)
					}
				} else if w, ok := attached(long); ok {
					shellOpt(w)
				}
			}
			if sub == "clone" && v == "-u" {
				if w, ok := next(); ok {
					shellOpt(w)
				}
			}
			if sub == "clone" && (v == "-c" || v == "--config") {
				if w, ok := next(); ok {
					k, val, _ := strings.Cut(w.val, "=")
					r.gitConfigPair(cmd, lit(k), lit(val), st)
				}
			}
			if u := strings.ToLower(v); strings.HasPrefix(u, "ext::") {
				// git's ext:: transport runs a command: words split at spaces, "% " a space.
				w := rest[j]
				w.val = extCommand(v[len("ext::"):])
				shellOpt(w)
			}
		case "send-email":
			for _, long := range []string{"--smtp-server", "--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd"} {
				if v == long {
					if w, ok := next(); ok && (long != "--smtp-server" || strings.HasPrefix(w.val, "/")) {
						shellOpt(w)
					}
				} else if w, ok := attached(long); ok && (long != "--smtp-server" || strings.HasPrefix(w.val, "/")) {
					shellOpt(w)
				}
			}
		case "instaweb":
			for _, long := range []string{"--httpd", "--browser"} {
				if v == long || v == "-d" && long == "--httpd" || v == "-b" && long == "--browser" {
					if w, ok := next(); ok {
						shellOpt(w)
					}
				} else if w, ok := attached(long); ok {
					shellOpt(w)
				}
			}
			cmd.runs = true
		}
	}
	switch sub {
	case "submodule":
		for j, w := range rest {
			if w.val == "foreach" {
				var ws []word
				for _, x := range rest[j+1:] {
					if len(ws) == 0 && (x.val == "--recursive" || x.val == "-q" || x.val == "--quiet") {
						continue
					}
					ws = append(ws, x)
				}
				cmd.runs = true
				if len(ws) > 0 {
					r.joined(&command{cwd: cmd.cwd}, ws, st)
				}
				break
			}
		}
	case "bisect":
		if len(rest) > 0 && rest[0].val == "run" && len(rest) > 1 {
			cmd.runs = true
			r.run(&command{cwd: cmd.cwd, wrappers: []string{"git"}}, rest[1:], st)
		}
	case "config":
		r.gitConfigWrite(cmd, rest, st)
	}
}

// gitConfigWrite reads a git config command: one that sets a key that runs code (or an alias)
// plants it for every later git command, outside this call's judging.
func (r *reader) gitConfigWrite(cmd *command, rest []word, st *state) {
	var ops []word
	write, edit := false, false
	for j := 0; j < len(rest); j++ {
		v := rest[j].val
		switch {
		case v == "--add" || v == "--replace-all" || v == "--unset" || v == "--unset-all" || v == "--rename-section" || v == "--remove-section" || v == "--append":
			write = true
		case v == "-e" || v == "--edit":
			edit = true
		case v == "-f" || v == "--file" || v == "--blob" || v == "--type" || v == "--default" || v == "--comment" || v == "--value" || v == "-t":
			if v == "-f" || v == "--file" {
				cmd.gitConfigFile = true
			}
			j++
		case strings.HasPrefix(v, "--file="):
			cmd.gitConfigFile = true
		case strings.HasPrefix(v, "-"):
		default:
			ops = append(ops, rest[j])
		}
	}
	if len(ops) > 0 {
		switch ops[0].val {
		case "set", "unset", "rename-section", "remove-section":
			write, ops = true, ops[1:]
		case "edit":
			edit = true
		case "get", "list":
			return
		}
	}
	if edit {
		cmd.runs = true
		cmd.gitConfigCode = "the config file, in an editor"
		cmd.gitConfigWrites = true
		return
	}
	if len(ops) >= 2 {
		write = true
	}
	if !write {
		return
	}
	cmd.gitConfigWrites = true
	if len(ops) == 0 {
		return
	}
	key := ops[0]
	val := word{known: true}
	if len(ops) > 1 {
		val = ops[1]
	}
	if !key.known {
		cmd.gitConfigCode = "a key only known when it runs"
		return
	}
	kind := gitKeyKind(key.val)
	if kind == gitKeyPlain {
		return
	}
	if kind == gitKeyAlias || gitKeyRunsCode(key.val, val.val) || !val.known || kind == gitKeyFile || kind == gitKeyWrite {
		cmd.gitConfigCode = "`" + key.val + "`"
		r.gitConfigPair(cmd, key, val, st)
	}
}

// extCommand is the shell line of an ext:: address's command (git-remote-ext): words split at
// unescaped spaces, %<space> a space, %% a percent sign, %s and %S git's own service names.
func extCommand(s string) string {
	var words []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+1 < len(s):
			i++
			switch s[i] {
			case ' ':
				b.WriteByte(' ')
			case '%':
				b.WriteByte('%')
			case 's', 'S':
				b.WriteString("git-upload-pack")
			default:
				b.WriteByte(s[i])
			}
		case c == ' ':
			words = append(words, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	words = append(words, b.String())
	for i, w := range words {
		words[i] = shellQuote(lit(w))
	}
	return strings.Join(words, " ")
}
