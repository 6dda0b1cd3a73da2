package judge

import (
	"net/url"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// access is one name a command reads or writes.
type access struct {
	w     word
	write bool
	cwd   string // the folder it resolves in, if not the command's
	// mention: a path written in inline code, judged only where the zones refuse it.
	mention bool
	kind    string // "archive": tar's archive; "extract": where tar unpacks
}

// operands are the words after the program that are not options or option values.
func operands(c *command) []word {
	if pa := c.opts(); pa != nil {
		return pa.ops
	}
	if c.ops != nil {
		return *c.ops
	}
	out := plainOperands(c)
	c.ops = &out
	return out
}

// plainOperands reads the operands of a program without a spec, by optsWithValue.
func plainOperands(c *command) []word {
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
	acc = append(acc, c.extra...)
	if c.prog == "" && !c.progUnknown {
		return acc, nil
	}
	if c.progUnknown {
		for _, a := range c.args[1:] {
			acc = append(acc, access{w: a, write: true})
		}
		return acc, nil
	}
	acc = append(acc, optionAccesses(c)...)
	if c.code {
		return acc, nil
	}
	p := c.prog
	if p == "cd" || p == "pushd" || p == "chdir" {
		if i := skipOpts(c.args, "LPe@"); i < len(c.args) && c.args[i].known {
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
	// --opt=/some/path values, for options no spec names
	if sp := programOpts[p]; sp == nil || sp.partial {
		for _, a := range c.args[1:] {
			if strings.HasPrefix(a.val, "--") {
				if i := strings.IndexByte(a.val, '='); i > 0 {
					v := a
					v.val = a.val[i+1:]
					name := a.val[2:i]
					if sp != nil {
						if _, known := sp.lookupLong(name); known != "" {
							continue
						}
					}
					if strings.HasPrefix(v.val, "/") || strings.HasPrefix(v.val, "./") || strings.HasPrefix(v.val, "../") || v.tilde {
						acc = append(acc, access{w: v, write: isOutputOpt(name) || !readsOnly(p)})
					}
				}
			}
		}
	}
	ops := operands(c)
	var rest []word
	upload := p == "curl" && hasFlag(c.args, "T", "upload-file")
	for _, o := range ops {
		if path, ok := fileURL(o); ok {
			// file:///… is a file, whatever program fetches it.
			acc = append(acc, access{w: path, write: upload})
			continue
		}
		acc = append(acc, argFiles(o)...)
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
		if pa := c.opts(); pa != nil {
			if !pa.pattern {
				ops = ops[1:]
			}
		} else if letters == "" || !hasFlag(c.args, letters, "regexp", "file", "expression", "from-file") {
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
	case "sed", "gsed":
		all(hasFlag(c.args, "i", "in-place"))
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		// After the program: input files, and VAR=value assignments.
		for _, o := range ops {
			if k, _, ok := strings.Cut(o.val, "="); ok && validName(k) {
				continue
			}
			acc = append(acc, access{w: o})
		}
	case "fd", "fdfind", "rg":
		if len(ops) == 0 {
			acc = append(acc, access{w: lit(".")})
		}
		all(false)
	case "grep", "egrep", "fgrep", "ggrep":
		if len(ops) == 0 && hasFlag(c.args, "rR", "recursive", "dereference-recursive") {
			acc = append(acc, access{w: lit(".")})
		}
		all(false)
	case "docker", "podman", "nerdctl":
		all(true)
		acc = append(acc, volumes(c.args)...)
	case "yq":
		all(hasFlag(c.args, "i", "inplace"))
	case "plutil":
		all(plutilWrites(c.args))
	case "exiftool":
		all(exiftoolWrites(c.args))
	case "pdftotext", "pdftoppm", "pdftohtml", "pdfimages", "pdftocairo", "pdfseparate", "pdfunite":
		lastWrite()
	case "base64", "gbase64":
		all(false)
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

// tarAccess is what tar reads and writes: the archive, the files it archives (each in the folder
// the -C before it moved to), and where it unpacks.
func tarAccess(c *command, ops []word) []access {
	mode := byte(0)
	for _, a := range c.args[1:] {
		v := a.val
		switch {
		case v == "--create" || v == "--append" || v == "--update" || v == "--catenate" || v == "--concatenate" || v == "--delete":
			mode = 'c'
		case v == "--extract" || v == "--get":
			mode = 'x'
		case v == "--list" || v == "--diff" || v == "--compare":
			mode = 't'
		case len(v) > 1 && v[0] == '-' && v[1] != '-':
			for _, ch := range []byte(v[1:]) {
				if strings.IndexByte("cruAxtd", ch) >= 0 {
					mode = ch
				}
				if strings.IndexByte("fCTXgNVKIFHbL", ch) >= 0 {
					break // the rest of the cluster is the option's value
				}
			}
		}
	}
	pa := c.opts()
	if pa == nil {
		return nil
	}
	var acc []access
	if v, ok := pa.value("-f", "--file"); ok && v.val != "-" {
		if _, remote := looksRemote(v.val); !remote {
			acc = append(acc, access{w: v, write: mode != 'x' && mode != 't' && mode != 'd', kind: "archive"})
		}
	}
	// The folder each operand is read in: -C applies to what follows it.
	dirAt := func(at int) string {
		dir := c.cwd
		for _, v := range pa.vals {
			if v.role&rChdir == 0 || v.at > at {
				continue
			}
			if !v.w.known || dir == "" {
				dir = ""
				continue
			}
			dir = resolve(dir, v.w.val)
		}
		return dir
	}
	switch mode {
	case 'x':
		dests := 0
		for _, v := range pa.vals {
			if v.role&rChdir != 0 {
				acc = append(acc, access{w: v.w, write: true, kind: "extract", cwd: dirAt(v.at - 1)})
				dests++
			}
		}
		if dests == 0 {
			acc = append(acc, access{w: lit("."), write: true, kind: "extract"})
		}
	case 't':
	default:
		remove := hasFlag(c.args, "", "remove-files")
		for i, o := range pa.ops {
			dir := dirAt(pa.opsAt[i])
			if dir == "" && !strings.HasPrefix(o.val, "/") {
				o = word{val: unknown, computed: true}
			}
			acc = append(acc, access{w: o, cwd: dir})
			if remove {
				acc = append(acc, access{w: o, cwd: dir, write: true})
			}
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

// optionAccesses are the files and folders a command's options name, by its spec.
func optionAccesses(c *command) []access {
	pa := c.opts()
	if pa == nil {
		return nil
	}
	var acc []access
	for _, v := range pa.vals {
		w := v.w
		if v.role&rTakesValue == 0 || w.val == "-" || w.val == "" && w.known {
			continue
		}
		if f, ok := fileURL(w); ok {
			acc = append(acc, access{w: f}) // curl --url file:///…
			continue
		}
		if (c.prog == "wget" || c.prog == "wget2") && (v.name == "-e" || v.name == "--execute") {
			// wget -e 'output_document = FILE': a wgetrc command, whose value may be a file written.
			if _, val, ok := strings.Cut(w.val, "="); ok {
				f := w
				f.val = strings.TrimSpace(val)
				f.known = !strings.Contains(f.val, unknown)
				acc = append(acc, access{w: f, write: true})
			}
			continue
		}
		if v.role&(rValue|rCode) == rValue || v.role&rCode != 0 {
			// awk -v f=/home/me/.ssh/id_rsa: a value naming a path plainly is judged where the zones refuse it.
			if k, val, ok := strings.Cut(w.val, "="); ok && validName(k) && (strings.HasPrefix(val, "/") || strings.HasPrefix(val, "~/")) {
				f := w
				f.val = val
				f.known = !strings.Contains(val, unknown)
				acc = append(acc, access{w: f, mention: true})
			}
		}
		switch {
		case v.role&(rRead|rDir|rMaybe|rList) != 0:
			acc = append(acc, access{w: w})
		case v.role&(rWrite|rOutDir) != 0:
			acc = append(acc, access{w: w, write: true})
		case v.role&rAt != 0:
			if f, ok := atFile(v.name, w); ok {
				acc = append(acc, access{w: f})
			}
		case v.role&rForm != 0:
			for _, f := range formFiles(w) {
				acc = append(acc, access{w: f})
			}
		}
	}
	return acc
}

// atFile is the file of curl's @FILE values (-d @FILE, --data-urlencode name@FILE, -H @FILE).
func atFile(name string, w word) (word, bool) {
	v := w.val
	i := strings.IndexByte(v, '@')
	if i < 0 || v[i+1:] == "-" || v[i+1:] == "" {
		return word{}, false
	}
	if i > 0 && (strings.Contains(v[:i], "=") || name != "--data-urlencode" && name != "--variable" && name != "--url-query") {
		return word{}, false
	}
	f := w
	f.val = v[i+1:]
	f.known = !strings.Contains(f.val, unknown)
	return f, true
}

// formFiles are the files of curl -F name=@FILE[;type=…] and name=<FILE.
func formFiles(w word) []word {
	_, val, ok := strings.Cut(w.val, "=")
	if !ok || val == "" || val[0] != '@' && val[0] != '<' {
		return nil
	}
	val = val[1:]
	var out []word
	for _, part := range strings.Split(val, ",") {
		part = strings.Trim(part, `"`)
		if i := strings.IndexByte(part, ';'); i >= 0 {
			part = part[:i]
		}
		if part == "" || part == "-" {
			continue
		}
		f := w
		f.val = part
		f.known = !strings.Contains(part, unknown)
		out = append(out, f)
	}
	return out
}

// fileURL is the path of a file: address (file:///etc/passwd, file://localhost/…, file:/x).
func fileURL(w word) (word, bool) {
	v := w.val
	if len(v) < 5 || !strings.EqualFold(v[:5], "file:") {
		return word{}, false
	}
	rest := v[5:]
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[i:] // the host, usually empty or localhost
		} else {
			rest = "/"
		}
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if u, err := url.PathUnescape(rest); err == nil {
		rest = u
	}
	f := w
	f.val = rest
	f.known = !strings.Contains(rest, unknown)
	// curl's own globs ({a,b}, [1-3]) make it a pattern.
	f.glob = f.glob || strings.ContainsAny(rest, "{[*?")
	return f, true
}

// argFiles are files an argument names in a form any program may use: @FILE (response files,
// curl-style data) and NAME=PATH.
func argFiles(w word) []access {
	v := w.val
	if strings.HasPrefix(v, "@") && len(v) > 1 && v != "@-" {
		f := w
		f.val = v[1:]
		f.known = !strings.Contains(f.val, unknown)
		return []access{{w: f}}
	}
	if k, val, ok := strings.Cut(v, "="); ok && k != "" && !strings.HasPrefix(k, "-") && (strings.HasPrefix(val, "/") || strings.HasPrefix(val, "~/")) {
		f := w
		f.val = val
		f.known = !strings.Contains(val, unknown)
		return []access{{w: f}}
	}
	return nil
}

// plutilWrites reports plutil changing the files it names (-convert, -insert, -replace, -remove …).
func plutilWrites(a []word) bool {
	for _, w := range a[1:] {
		switch w.val {
		case "-convert", "-insert", "-replace", "-remove", "-o", "-create":
			return true
		}
	}
	return false
}

// exiftoolWrites reports exiftool writing tags or files.
func exiftoolWrites(a []word) bool {
	for _, w := range a[1:] {
		v := w.val
		if strings.HasPrefix(v, "-") && (strings.ContainsAny(v, "=<") || strings.HasPrefix(v, "-overwrite_original") || v == "-o" || v == "-out" || v == "-w" || v == "-W" || v == "-geotag" || v == "-tagsFromFile" || v == "-delete_original") {
			return true
		}
	}
	return false
}

// tarDashes rewrites tar's old bundled options (tar czfC x.tgz dir files) as the dashed options
// they are, each taking its value from the following words in order.
func tarDashes(args []word) []word {
	if len(args) < 2 || strings.HasPrefix(args[1].val, "-") || !args[1].known || args[1].val == "" {
		return args
	}
	sp := programOpts["tar"]
	out := []word{args[0]}
	next := 2
	for _, ch := range []byte(args[1].val) {
		out = append(out, lit("-"+string(ch)))
		if ch < 128 && sp.short[ch]&rTakesValue != 0 && next < len(args) {
			out = append(out, args[next])
			next++
		}
	}
	return append(out, args[next:]...)
}
