package judge

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// access is one name a command reads or writes.
type access struct {
	w     word
	write bool
	cwd   string // the folder it resolves in, if not the command's
}

// operands are the words after the program that are not options or option values.
func operands(c *command) []word {
	spec, known := optsWithValue[c.prog]
	var out []word
	args := c.args
	for i := 1; i < len(args); i++ {
		v := args[i].val
		if v == "--" {
			out = append(out, args[i+1:]...)
			break
		}
		if len(v) > 1 && v[0] == '-' && !(c.prog == "chmod" && len(v) > 1 && strings.IndexAny(v[1:], "rwxXst") >= 0 && !strings.HasPrefix(v, "--")) {
			if strings.HasPrefix(v, "--") {
				name := v[2:]
				if strings.Contains(name, "=") {
					continue
				}
				for _, l := range spec.long {
					if l == name {
						i++
						break
					}
				}
				continue
			}
			if known {
				for j := 1; j < len(v); j++ {
					if strings.IndexByte(spec.short, v[j]) >= 0 {
						if j == len(v)-1 {
							i++
						}
						break
					}
				}
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// looksRemote reports an address, not a file: a URL or scp's host:path.
func looksRemote(v string) (host string, ok bool) {
	if strings.Contains(v, "://") {
		return urlHost(v), true
	}
	if i := strings.IndexByte(v, ':'); i > 0 && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, ".") {
		if j := strings.IndexByte(v, '/'); j < 0 || j > i {
			h := v[:i]
			if k := strings.LastIndexByte(h, '@'); k >= 0 {
				h = h[k+1:]
			}
			if h != "" && !strings.ContainsAny(h, " \x00") {
				return h, true
			}
		}
	}
	return "", false
}

func isWriteRedir(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		return true
	}
	return false
}

// accesses lists what a command reads and writes, and the hosts it names.
func accesses(c *command) (acc []access, hosts []string) {
	for _, r := range c.redirs {
		switch r.op {
		case syntax.DplIn, syntax.DplOut:
			v := r.target.val
			if v == "-" || strings.Trim(v, "0123456789") == "" {
				continue
			}
			acc = append(acc, access{w: r.target, write: r.op == syntax.DplOut})
		case syntax.RdrIn:
			acc = append(acc, access{w: r.target})
		default:
			acc = append(acc, access{w: r.target, write: isWriteRedir(r.op)})
		}
	}
	if c.prog == "" && !c.progUnknown {
		return acc, nil
	}
	if c.progUnknown {
		for _, a := range c.args[1:] {
			acc = append(acc, access{w: a, write: true})
		}
		return acc, nil
	}
	if c.code {
		return acc, nil
	}
	p := c.prog
	if p == "cd" || p == "pushd" || p == "chdir" {
		if i := skipOpts(c.args, ""); i < len(c.args) {
			acc = append(acc, access{w: c.args[i]})
		}
		return acc, nil
	}
	if hasKey(noPathPrograms, p) {
		return acc, nil
	}
	if hasKey(remotePrograms, p) && p != "scp" && p != "rsync" && p != "sftp" {
		for _, o := range operands(c) {
			if h, ok := looksRemote(o.val); ok {
				hosts = append(hosts, h)
			} else if !strings.Contains(o.val, "/") {
				hosts = append(hosts, o.val)
				break
			}
		}
		return acc, hosts
	}
	// --opt=/some/path values
	for _, a := range c.args[1:] {
		if strings.HasPrefix(a.val, "--") {
			if i := strings.IndexByte(a.val, '='); i > 0 {
				v := a
				v.val = a.val[i+1:]
				name := a.val[2:i]
				if strings.HasPrefix(v.val, "/") || strings.HasPrefix(v.val, "./") || strings.HasPrefix(v.val, "../") || v.tilde {
					acc = append(acc, access{w: v, write: isOutputOpt(name) || !readsOnly(p)})
				}
			}
		}
	}
	ops := operands(c)
	var rest []word
	for _, o := range ops {
		if h, ok := looksRemote(o.val); ok && p != "git" || strings.Contains(o.val, "://") {
			if h, ok := looksRemote(o.val); ok && h != "" {
				hosts = append(hosts, h)
			}
			_ = h
			continue
		}
		rest = append(rest, o)
	}
	ops = rest
	if letters, ok := patternFirst[p]; ok && len(ops) > 0 {
		if letters == "" || !hasFlag(c.args, letters, "regexp", "file", "expression", "from-file") {
			ops = ops[1:]
		}
	}
	all := func(write bool) {
		for _, o := range ops {
			acc = append(acc, access{w: o, write: write})
		}
	}
	lastWrite := func() {
		if t, ok := optValue(c.args, 't', "target-directory"); ok {
			acc = append(acc, access{w: t, write: true})
			all(p == "mv")
			return
		}
		for i, o := range ops {
			acc = append(acc, access{w: o, write: i == len(ops)-1 || p == "mv"})
		}
	}
	switch p {
	case "sed":
		all(hasFlag(c.args, "i", "in-place"))
	case "cp", "install", "ln", "mv", "rsync", "scp", "sftp":
		lastWrite()
	case "chmod", "chown", "chgrp", "chattr", "setfacl":
		if !hasFlag(c.args, "", "reference") && len(ops) > 0 {
			ops = ops[1:]
		}
		all(true)
	case "tar", "bsdtar", "gtar":
		acc = append(acc, tarAccess(c, ops)...)
	case "dd":
		for _, a := range c.args[1:] {
			if strings.HasPrefix(a.val, "if=") || strings.HasPrefix(a.val, "of=") {
				v := a
				v.val = a.val[3:]
				acc = append(acc, access{w: v, write: a.val[0] == 'o'})
			}
		}
	case "curl", "curlie":
		for _, o := range ops {
			hosts = append(hosts, urlHost("https://"+strings.TrimPrefix(strings.TrimPrefix(o.val, "https://"), "http://")))
		}
		for _, o := range []struct {
			s byte
			l string
			w bool
		}{{'o', "output", true}, {'T', "upload-file", false}, {'K', "config", false}, {'c', "cookie-jar", true}, {0, "output-dir", true}, {'D', "dump-header", true}} {
			if v, ok := optValue(c.args, o.s, o.l); ok && v.val != "-" {
				acc = append(acc, access{w: v, write: o.w})
			}
		}
		for _, l := range []string{"data", "data-binary", "data-urlencode", "form"} {
			if v, ok := optValue(c.args, 'd', l); ok && strings.HasPrefix(v.val, "@") {
				v.val = v.val[1:]
				acc = append(acc, access{w: v})
			}
		}
		if hasFlag(c.args, "O", "remote-name", "remote-name-all") {
			acc = append(acc, access{w: lit("."), write: true})
		}
	case "wget":
		for _, o := range ops {
			hosts = append(hosts, urlHost("https://"+strings.TrimPrefix(strings.TrimPrefix(o.val, "https://"), "http://")))
		}
		if v, ok := optValue(c.args, 'O', "output-document"); ok {
			if v.val != "-" {
				acc = append(acc, access{w: v, write: true})
			}
		} else if v, ok := optValue(c.args, 'P', "directory-prefix"); ok {
			acc = append(acc, access{w: v, write: true})
		} else {
			acc = append(acc, access{w: lit("."), write: true})
		}
		if v, ok := optValue(c.args, 'i', "input-file"); ok {
			acc = append(acc, access{w: v})
		}
	case "find":
		acc = append(acc, findAccess(c)...)
	case "unzip":
		if len(ops) > 0 {
			acc = append(acc, access{w: ops[0]})
		}
		if d, ok := optValue(c.args, 'd', ""); ok {
			acc = append(acc, access{w: d, write: true})
		} else {
			acc = append(acc, access{w: lit("."), write: true})
		}
	case "uniq":
		for i, o := range ops {
			acc = append(acc, access{w: o, write: i == 1})
		}
	case "xxd":
		for i, o := range ops {
			acc = append(acc, access{w: o, write: i == 1})
		}
	case "git":
		// git.go judges git's operands.
	default:
		if isInterpreter(p) || isShell(p) || p == "source" || p == "." {
			for i, a := range c.args {
				if i == c.script && i > 0 {
					acc = append(acc, access{w: a})
				} else if i > c.script && c.script > 0 && !strings.HasPrefix(a.val, "-") {
					if _, ok := looksRemote(a.val); !ok {
						acc = append(acc, access{w: a, write: true})
					}
				}
			}
			break
		}
		all(!readsOnly(p))
		for _, o := range []string{"output", "out", "outfile", "out-file", "output-file", "log-file"} {
			if v, ok := optValue(c.args, 0, o); ok {
				acc = append(acc, access{w: v, write: true})
			}
		}
		if _, ok := optsWithValue[p]; !ok && !readsOnly(p) {
			if v, ok := optValue(c.args, 'o', ""); ok {
				acc = append(acc, access{w: v, write: true})
			}
		}
	}
	return acc, hosts
}

func isOutputOpt(name string) bool {
	switch name {
	case "output", "out", "outfile", "out-file", "output-file", "log-file", "output-dir", "outdir", "out-dir", "prefix", "target", "target-dir", "dest", "destination", "directory-prefix", "output-document":
		return true
	}
	return false
}

func readsOnly(p string) bool {
	if _, ok := quietPrograms[p]; ok {
		return true
	}
	return hasKey(readOnlyPrograms, p)
}

func tarAccess(c *command, ops []word) []access {
	mode := byte(0)
	archiveNext := false
	args := c.args
	if len(args) > 1 && !strings.HasPrefix(args[1].val, "-") {
		// bundled: tar czf x.tgz …
		for i := 0; i < len(args[1].val); i++ {
			switch ch := args[1].val[i]; ch {
			case 'c', 'r', 'u', 'A', 'x', 't':
				mode = ch
			case 'f':
				archiveNext = true
			}
		}
		if len(ops) > 0 {
			ops = ops[1:]
		}
	} else {
		for _, a := range args[1:] {
			v := a.val
			switch {
			case v == "--create" || v == "--append" || v == "--update":
				mode = 'c'
			case v == "--extract" || v == "--get":
				mode = 'x'
			case v == "--list":
				mode = 't'
			case len(v) > 1 && v[0] == '-' && v[1] != '-':
				for _, ch := range []byte(v[1:]) {
					if strings.IndexByte("cruAxt", ch) >= 0 {
						mode = ch
					}
				}
			}
		}
	}
	var acc []access
	var archive *word
	if v, ok := optValue(c.args, 'f', "file"); ok {
		archive = &v
	} else if archiveNext && len(ops) > 0 {
		archive = &ops[0]
		ops = ops[1:]
	}
	switch mode {
	case 'x':
		if archive != nil {
			acc = append(acc, access{w: *archive})
		}
		if d, ok := optValue(c.args, 'C', "directory"); ok {
			acc = append(acc, access{w: d, write: true})
		} else {
			acc = append(acc, access{w: lit("."), write: true})
		}
	case 't':
		if archive != nil {
			acc = append(acc, access{w: *archive})
		}
	default:
		if archive != nil && archive.val != "-" {
			acc = append(acc, access{w: *archive, write: true})
		}
		for _, o := range ops {
			acc = append(acc, access{w: o})
		}
	}
	return acc
}

func findAccess(c *command) []access {
	var acc []access
	args := c.args
	i := 1
	for i < len(args) && (args[i].val == "-L" || args[i].val == "-H" || args[i].val == "-P" || strings.HasPrefix(args[i].val, "-O") || args[i].val == "-D") {
		if args[i].val == "-D" {
			i++
		}
		i++
	}
	var starts []word
	for ; i < len(args); i++ {
		v := args[i].val
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ")" {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []word{lit(".")}
	}
	for _, s := range starts {
		acc = append(acc, access{w: s, write: c.findDelete})
	}
	for ; i < len(args)-1; i++ {
		switch args[i].val {
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			acc = append(acc, access{w: args[i+1], write: true})
		case "-newer", "-anewer", "-cnewer", "-samefile":
			acc = append(acc, access{w: args[i+1]})
		}
	}
	return acc
}
