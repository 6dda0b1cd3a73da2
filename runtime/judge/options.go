package judge

import (
	"strings"
)

// A program's options, as the judge reads them: which take a value, and what that value is. A file
// named in an option (grep -f FILE, sort -o FILE, tar -C DIR, jq --rawfile NAME FILE) is judged by
// the zones like any operand; an option that runs a program, follows links or writes makes a quiet
// read follow the mode; and an option the judge does not know makes it follow the mode too, so a
// quiet read is quiet only when every option in it is one the judge knows to read nothing more.

// role is what an option is and what its value names.
type role uint32

const (
	rKnown    role = 1 << iota // the option is in the program's list
	rValue                     // it takes a value
	rRead                      // the value is a file the program reads
	rWrite                     // the value is a file the program writes
	rDir                       // the value is a folder the program reads (a search path)
	rOutDir                    // the value is a folder the program writes into
	rChdir                     // the value is a folder the program works in
	rList                      // the value is a file listing more names the judge cannot see
	rProg                      // the value is a program the program runs, with its arguments
	rShell                     // the value is a shell line the program runs
	rRest                      // the words after it, up to a lone ";", are a command the program runs
	rOptional                  // the value is optional: only when attached (--opt=v, -ov)
	rTwo                       // it takes two values; the second has the role (jq --rawfile NAME FILE)
	rAt                        // a value "@FILE" names a file the program reads (curl -d @FILE)
	rForm                      // curl -F: "name=@FILE" and "name=<FILE" name files it reads
	rPattern                   // it gives the pattern or script, so the first operand is not one
	rLoud                      // it makes a quiet read follow the mode (follows links, runs programs, writes)
	rMaybe                     // the value may name a file (BSD and GNU differ): judged as a read
	rCode                      // the value is inline code in a language the judge does not read
)

const rTakesValue = rValue | rRead | rWrite | rDir | rOutDir | rChdir | rList | rProg | rShell | rMaybe | rCode | rAt | rForm

// optSpec is one program's options.
type optSpec struct {
	short [128]role
	long  map[string]role
	// num: -NUM is an option (head -20, grep -3).
	num bool
	// single: words with one dash are whole options (find -name, xxd -cols).
	single bool
	// partial: only the options that name files or run programs are listed; others are taken for
	// flags. Only programs that are never quiet have partial lists.
	partial bool
}

func (sp *optSpec) lookupLong(name string) (role, string) {
	if r, ok := sp.long[name]; ok {
		return r, name
	}
	// GNU getopt takes any unambiguous prefix of a long option (sort --out=x is --output=x).
	var hit string
	var hr role
	for l, r := range sp.long {
		if strings.HasPrefix(l, name) {
			if hit != "" {
				return 0, ""
			}
			hit, hr = l, r
		}
	}
	return hr, hit
}

// parseSpec reads a spec: space-separated options, each "-x" or "--name", with ":" and role
// letters for what it takes, and "+num", "+single" or "+partial" for the spec itself.
//
//	v value   r file read   w file written   d folder read   D folder written   C folder worked in
//	l file of names   x program run   s shell line   E rest is a command   ? optional value
//	2 two values   @ @FILE   F curl form   p gives the pattern   L loud   m may be a file   c code
func parseSpec(s string) *optSpec {
	sp := &optSpec{long: map[string]role{}}
	for _, tok := range strings.Fields(s) {
		switch tok {
		case "+num":
			sp.num = true
			continue
		case "+single":
			sp.single = true
			continue
		case "+partial":
			sp.partial = true
			continue
		}
		name, letters, _ := strings.Cut(tok, ":")
		r := rKnown
		for _, ch := range letters {
			switch ch {
			case 'v':
				r |= rValue
			case 'r':
				r |= rValue | rRead
			case 'w':
				r |= rValue | rWrite
			case 'd':
				r |= rValue | rDir
			case 'D':
				r |= rValue | rOutDir
			case 'C':
				r |= rValue | rChdir
			case 'l':
				r |= rValue | rList
			case 'x':
				r |= rValue | rProg
			case 's':
				r |= rValue | rShell
			case 'E':
				r |= rRest
			case '?':
				r |= rOptional
			case '2':
				r |= rTwo
			case '@':
				r |= rValue | rAt
			case 'F':
				r |= rValue | rForm
			case 'p':
				r |= rPattern
			case 'L':
				r |= rLoud
			case 'm':
				r |= rValue | rMaybe
			case 'c':
				r |= rValue | rCode
			default:
				panic("judge: option spec " + tok + ": unknown role " + string(ch))
			}
		}
		switch {
		case strings.HasPrefix(name, "--"):
			sp.long[name[2:]] = r
		case sp.single && len(name) > 2:
			sp.long[name[1:]] = r
		case len(name) == 2 && name[0] == '-' && name[1] < 128:
			sp.short[name[1]] = r
		default:
			panic("judge: option spec: bad option " + tok)
		}
	}
	return sp
}

// optVal is one option's value.
type optVal struct {
	role role
	name string // as written: "-f", "--file"
	w    word
	at   int // the index in the args of the option
}

// parsedArgs is a command's words read with its program's spec.
type parsedArgs struct {
	ops     []word
	opsAt   []int
	vals    []optVal
	unknown []string // options the spec does not list
	loud    bool
	pattern bool
	rest    []word // the command of an rRest option
}

// parseArgs reads args (args[0] is the program) by sp, GNU style: options and operands in any
// order until "--".
func parseArgs(sp *optSpec, args []word) *parsedArgs {
	p := &parsedArgs{}
	add := func(r role, name string, w word, at int) {
		if r&rLoud != 0 {
			p.loud = true
		}
		if r&rPattern != 0 {
			p.pattern = true
		}
		p.vals = append(p.vals, optVal{role: r, name: name, w: w, at: at})
	}
	// value takes the option's value: attached, or the next word(s).
	value := func(r role, name, attached string, hasAttached bool, i *int, at int, self word) {
		if r&rTakesValue == 0 && r&rTwo == 0 {
			add(r, name, word{}, at)
			return
		}
		first := self
		switch {
		case hasAttached:
			first.val = attached
		case r&rOptional != 0:
			add(r&^rTakesValue, name, word{}, at)
			return
		case *i+1 < len(args):
			*i++
			first = args[*i]
		default:
			add(r&^rTakesValue, name, word{}, at)
			return
		}
		if r&rTwo != 0 {
			if *i+1 >= len(args) {
				return
			}
			*i++
			add(r, name, args[*i], at)
			return
		}
		add(r, name, first, at)
	}
	for i := 1; i < len(args); i++ {
		w := args[i]
		v := w.val
		if v == "--" && !sp.single {
			for k := i + 1; k < len(args); k++ {
				p.ops = append(p.ops, args[k])
				p.opsAt = append(p.opsAt, k)
			}
			break
		}
		if len(v) < 2 || v[0] != '-' || !w.known && strings.HasPrefix(v, "-"+unknown) {
			p.ops = append(p.ops, w)
			p.opsAt = append(p.opsAt, i)
			continue
		}
		at := i
		if strings.HasPrefix(v, "--") || sp.single {
			name := strings.TrimLeft(v, "-")
			if len(v)-len(name) > 2 {
				p.unknown = append(p.unknown, v)
				continue
			}
			attached, hasAttached := "", false
			if k := strings.IndexByte(name, '='); k >= 0 {
				name, attached, hasAttached = name[:k], name[k+1:], true
			}
			r, full := sp.lookupLong(name)
			if r == 0 && sp.single && !hasAttached {
				// -l16, -cols8: a value attached to an option of one dash.
				for l, lr := range sp.long {
					if lr&rTakesValue != 0 && len(l) < len(name) && strings.HasPrefix(name, l) {
						r, full, attached, hasAttached = lr, l, name[len(l):], true
						break
					}
				}
				if r == 0 && len(name) > 1 && name[0] < 128 && sp.short[name[0]]&rTakesValue != 0 {
					r, full, attached, hasAttached = sp.short[name[0]], name[:1], name[1:], true
				}
			}
			if r == 0 && sp.single && len(name) == 1 && name[0] < 128 {
				r, full = sp.short[name[0]], name
			}
			if r == 0 {
				p.unknown = append(p.unknown, v)
				continue
			}
			prefix := "--"
			if sp.single {
				prefix = "-"
			}
			value(r, prefix+full, attached, hasAttached, &i, at, w)
			if r&rRest != 0 {
				p.rest = restCommand(args, &i)
			}
			continue
		}
		if sp.num && allDigits(v[1:]) {
			continue
		}
		for j := 1; j < len(v); j++ {
			ch := v[j]
			if ch >= 128 || sp.short[ch] == 0 {
				p.unknown = append(p.unknown, "-"+v[j:j+1])
				continue
			}
			r := sp.short[ch]
			if r&(rTakesValue|rTwo) != 0 {
				rest := v[j+1:]
				value(r, "-"+v[j:j+1], rest, rest != "", &i, at, w)
				if r&rRest != 0 {
					p.rest = restCommand(args, &i)
				}
				break
			}
			add(r, "-"+v[j:j+1], word{}, at)
			if r&rRest != 0 {
				p.rest = restCommand(args, &i)
				break
			}
		}
	}
	return p
}

// restCommand takes the words after args[*i] up to a lone ";" (fd -x CMD ARGS… ;).
func restCommand(args []word, i *int) []word {
	var out []word
	for *i+1 < len(args) {
		*i++
		if args[*i].val == ";" {
			break
		}
		out = append(out, args[*i])
	}
	return out
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// has reports an option given by any of names ("-f", "--file").
func (p *parsedArgs) has(names ...string) bool {
	for _, v := range p.vals {
		for _, n := range names {
			if v.name == n {
				return true
			}
		}
	}
	return false
}

// value is the last value of an option given by any of names.
func (p *parsedArgs) value(names ...string) (word, bool) {
	var out word
	found := false
	for _, v := range p.vals {
		for _, n := range names {
			if v.name == n && v.role&rTakesValue != 0 {
				out, found = v.w, true
			}
		}
	}
	return out, found
}

// programOpts are the programs whose options the judge knows, by name.
var programOpts = map[string]*optSpec{}

func init() {
	for names, s := range optionSpecs {
		sp := parseSpec(s)
		for _, n := range strings.Fields(names) {
			programOpts[n] = sp
		}
	}
}

// Shared pieces of the specs below.
const (
	specHelp = " --help --version"
	specSums = "-b -t -z -w --binary --text --zero --tag --untagged --ignore-missing --quiet --status --strict --warn -l:v --length:v -a:v --algorithm:v --base64 --raw --debug -c:L --check:L -U -0 -p -s" + specHelp
	specGrep = "-A:v -B:v -C:v +num -a -b -c -d:v -D:v -e:vp -E -f:rp -F -G -h -H -i -I -l -L -m:v -n -o -P -q -r -R:L -s -T -u -U -v -V -w -x -y -z -Z " +
		"--after-context:v --before-context:v --context:v --binary --binary-files:v --byte-offset --basic-regexp --count --color:v? --colour:v? " +
		"--devices:v --directories:v --exclude:v --exclude-dir:v --exclude-from:r --extended-regexp --file:rp --files-with-matches " +
		"--files-without-match --fixed-strings --fixed-regexp --ignore-case --no-ignore-case --include:v --initial-tab --invert-match --label:v --line-buffered " +
		"--line-number --line-regexp --max-count:v --no-filename --no-messages --null --null-data --only-matching --perl-regexp --quiet " +
		"--recursive --dereference-recursive:L --regexp:vp --silent --text --with-filename --word-regexp" + specHelp
	specAwk = "-f:rp --file:rp -v:v --assign:v -F:v --field-separator:v -i:r --include:r -l:L --load:L -E:rp --exec:rp -e:vp --source:vp " +
		"-o:w? --pretty-print:w? -p:w? --profile:w? -d:w? --dump-variables:w? -D:v? --debug:v? -b -c -C -g -h -L:v? -M -n -N -O -P -r -s -S -t -V " +
		"--characters-as-bytes --traditional --copyright --gen-pot --lint:v? --bignum --use-lc-numeric --non-decimal-data --optimize --posix " +
		"--re-interval --no-optimize --sandbox --lint-old --csv" + specHelp
)

// optionSpecs lists the options of every quiet read and of the other programs whose options name
// files, by program (several names share one spec).
var optionSpecs = map[string]string{
	// Quiet reads: complete lists, so an option not here makes the command follow the mode.
	"cat gcat":   "-A -b -e -E -n -s -t -T -u -v -l --show-all --number-nonblank --show-ends --number --squeeze-blank --show-tabs --show-nonprinting" + specHelp,
	"head ghead": "-c:v -n:v -q -v -z --bytes:v --lines:v --quiet --silent --verbose --zero-terminated +num" + specHelp,
	"tail gtail": "-c:v -f -F -n:v -q -s:v -v -z -r -b:v --bytes:v --follow:v? --lines:v --pid:v --quiet --retry --silent --sleep-interval:v " +
		"--verbose --zero-terminated --max-unchanged-stats:v +num" + specHelp,
	"wc gwc": "-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total:v --files0-from:l --libxo:v" + specHelp,
	"ls gls": "-a -A -b -B -c -C -d -D -f -F -g -G -h -H:L -i -I:m -k -l -L:L -m -n -N -o -p -q -Q -r -R -s -S -t -T -u -U -v -w:v -x -X -Z -1 -e -O -P -W -@ -% -, " +
		"--all --almost-all --author --escape --block-size:v --ignore-backups --color:v? --colour:v? --directory --dired --classify:v? --file-type --format:v " +
		"--full-time --group-directories-first --no-group --human-readable --si --dereference-command-line:L --dereference-command-line-symlink-to-dir:L " +
		"--hide:v --hyperlink:v? --indicator-style:v --inode --ignore:v --kibibytes --dereference:L --literal --numeric-uid-gid --hide-control-chars " +
		"--show-control-chars --quote-name --quoting-style:v --reverse --recursive --size --sort:v --time:v --time-style:v --tabsize:v --width:v --context --zero" + specHelp,
	"grep egrep fgrep ggrep": specGrep,
	"rg": "-e:vp --regexp:vp -f:rp --file:rp --pre:x --pre-glob:v -z:L --search-zip:L -L:L --follow:L --ignore-file:r --ignore-file-case-insensitive " +
		"-g:v --glob:v --iglob:v --glob-case-insensitive -t:v --type:v -T:v --type-not:v --type-add:v --type-clear:v --type-list -r:v --replace:v " +
		"-A:v -B:v -C:v --after-context:v --before-context:v --context:v -m:v --max-count:v -M:v --max-columns:v --max-columns-preview -j:v --threads:v " +
		"-E:v --encoding:v --engine:v --sort:v --sortr:v --sort-files -d:v --max-depth:v --maxdepth:v --max-filesize:v --colors:v --color:v " +
		"--path-separator:v --context-separator:v --no-context-separator --field-match-separator:v --field-context-separator:v --dfa-size-limit:v " +
		"--regex-size-limit:v --hostname-bin:x --hyperlink-format:v --generate:v --no-config -a --text -c --count --count-matches -i --ignore-case " +
		"-s --case-sensitive -S --smart-case -l --files-with-matches --files-without-match --files -n --line-number -N --no-line-number " +
		"-o --only-matching -p --pretty -q --quiet -u --unrestricted -v --invert-match -V -w --word-regexp -x --line-regexp -F --fixed-strings " +
		"-U --multiline --multiline-dotall -P --pcre2 --no-pcre2-unicode --auto-hybrid-regex --hidden --no-hidden -. --no-ignore --no-ignore-dot " +
		"--no-ignore-exclude --no-ignore-files --no-ignore-global --no-ignore-parent --no-ignore-vcs --no-require-git --ignore --ignore-vcs " +
		"--json --no-json --vimgrep --heading --no-heading --column --no-column --trim --no-trim -b --byte-offset --stats --passthru --passthrough " +
		"--crlf --null -0 --null-data --one-file-system --binary --no-binary --debug --trace --no-messages --no-unicode --include-zero --mmap --no-mmap " +
		"--block-buffered --line-buffered -H --with-filename -I --no-filename --no-follow -h --help --version --pcre2-version",
	"fd fdfind": "-x:E --exec:E -X:E --exec-batch:E -L:L --follow:L --base-directory:C --search-path:d --ignore-file:r -e:v --extension:v -t:v --type:v " +
		"-E:v --exclude:v -d:v --max-depth:v --min-depth:v --exact-depth:v -S:v --size:v --changed-within:v --changed-before:v --newer:v --older:v " +
		"-o:v --owner:v --format:v -c:v --color:v -j:v --threads:v --max-results:v --batch-size:v --path-separator:v --max-buffer-time:v --and:v " +
		"--one-file-system --mount --xdev -H --hidden -I --no-ignore --no-ignore-vcs --no-ignore-parent --no-global-ignore-file --no-require-git " +
		"-u --unrestricted -s --case-sensitive -i --ignore-case -g --glob --regex -F --fixed-strings -a --absolute-path -l --list-details " +
		"-p --full-path -0 --print0 -1 -q --quiet --show-errors --strip-cwd-prefix:v? --prune --hyperlink:v? -h --help -V --version",
	"tree": "-a -d -l:L -f -x -L:v -R:L -P:v -I:v --gitignore --gitfile:r --ignore-case --matchdirs --metafirst --prune --info --infofile:r --noreport " +
		"--charset:v --filelimit:v --timefmt:v -o:w -q -N -Q -p -u -g -s -h --si --du -D -F --inodes --device -v -t -c -U -r --dirsfirst --filesfirst " +
		"--sort:v -i -A -S -n -C -X -J -H:v -T:v --nolinks --fromfile --fromtabfile --fflinks --hyperlink:v? --hintro:r --houtro:r --scheme:v --authority:v" + specHelp,
	"file": "-b -c -d -E -e:v -F:v -f:l -h -i -k -l -L:L -m:r -n -N -p -P:v -r -s -S -v -z -Z -0 -C:L -I --apple --brief --checking-printout " +
		"--debug --exclude:v --exclude-quiet:v --extension --files-from:l --separator:v --no-dereference --mime --mime-type --mime-encoding " +
		"--keep-going --list --dereference:L --magic-file:r --no-buffer --no-pad --print0 --preserve-date --parameter:v --raw --special-files " +
		"--uncompress --uncompress-noreport --compile:L --no-sandbox" + specHelp,
	"stat gstat": "-L:L --dereference:L -f --file-system -c:v --format:v --printf:v -t --terse --cached:v -F -l -n -q -r -s -x -H" + specHelp,
	"du gdu": "-0 -a -A --apparent-size -B:v --block-size:v -b --bytes -c --total -D:L --dereference-args:L -d:v --max-depth:v --files0-from:l " +
		"-H:L -h --human-readable --inodes -k -L:L --dereference:L -l --count-links -m -P --no-dereference -S --separate-dirs --si -s --summarize " +
		"-t:v --threshold:v --time:v? --time-style:v -X:r --exclude-from:r --exclude:v -x --one-file-system -I:v -g -r -n" + specHelp,
	"pwd":      "-L -P" + specHelp,
	"basename": "-a -s:v -z --multiple --suffix:v --zero" + specHelp,
	"dirname":  "-z --zero" + specHelp,
	"realpath grealpath": "-e -m -L -P -q -s -z --relative-to:d --relative-base:d --canonicalize-existing --canonicalize-missing --logical " +
		"--physical --quiet --strip --no-symlinks --zero" + specHelp,
	"readlink greadlink": "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing --no-newline --quiet --silent " +
		"--verbose --zero" + specHelp,
	"sort gsort": "-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z --ignore-leading-blanks --dictionary-order --ignore-case " +
		"--general-numeric-sort --human-numeric-sort --ignore-nonprinting --month-sort --numeric-sort --random-sort --random-source:r --reverse " +
		"--sort:v --version-sort --batch-size:v --check:v? --compress-program:x --debug --files0-from:l -k:v --key:v --merge -o:w --output:w " +
		"--stable -S:v --buffer-size:v -t:v --field-separator:v -T:D --temporary-directory:D --parallel:v --unique --zero-terminated" + specHelp,
	"uniq guniq": "-c -d -D -f:v -i -s:v -u -w:v -z --count --repeated --all-repeated:v? --skip-fields:v --group:v? --ignore-case " +
		"--skip-chars:v --unique --zero-terminated --check-chars:v +num" + specHelp,
	"cut gcut": "-b:v -c:v -d:v -f:v -n -s -z -w --bytes:v --characters:v --delimiter:v --fields:v --complement --only-delimited " +
		"--output-delimiter:v --zero-terminated" + specHelp,
	"tr gtr": "-c -C -d -s -t -u --complement --delete --squeeze-repeats --truncate-set1" + specHelp,
	"nl gnl": "-b:v -d:v -f:v -h:v -i:v -l:v -n:v -p -s:v -v:v -w:v --body-numbering:v --section-delimiter:v --footer-numbering:v " +
		"--header-numbering:v --line-increment:v --join-blank-lines:v --number-format:v --no-renumber --number-separator:v " +
		"--starting-line-number:v --number-width:v" + specHelp,
	"od god": "-A:v -j:v -N:v -S:v? -t:v -v -w:v? -a -b -c -d -f -i -l -o -s -x -D -e -F -H -I -L -O -X -B --address-radix:v --endian:v " +
		"--skip-bytes:v --read-bytes:v --strings:v? --format:v --output-duplicates --width:v? --traditional" + specHelp,
	"hexdump hd": "-b -c -C -d -o -x -e:v -f:rp -n:v -s:v -v -L:v?",
	"xxd": "+single -a -autoskip -b -bits -C -capitalize -c:v -cols:v -E -EBCDIC -e -g:v -groupsize:v -h -help -i -include -l:v -len:v " +
		"-n:v -name:v -o:v -p -ps -postscript -plain -r:L -revert:L -d -R:v -s:v -seek:v -u -uppercase -v -version",
	"strings gstrings": "-a --all -d --data -f --print-file-name -n:v --bytes:v +num -t:v --radix:v -o -e:v --encoding:v -T:v --target:v " +
		"-w --include-all-whitespace -s:v --output-separator:v --unicode:v -U:v" + specHelp,
	"cmp gcmp":   "-b -i:v -l -n:v -s --print-bytes --ignore-initial:v --verbose --bytes:v --quiet --silent -h -x -z" + specHelp,
	"comm gcomm": "-1 -2 -3 -i -z --check-order --nocheck-order --output-delimiter:v --total --zero-terminated" + specHelp,
	"diff gdiff": "-a -b -B -c -C:v -d -D:v -e -E -f -F:v -i -I:v -l:L -L:v -n -N -p -P -q -r:L -s -S:v -t -T -u -U:v -v -w -W:v -x:v -X:r " +
		"-y -Z +num --text --ignore-space-change --ignore-blank-lines --context:v? --minimal --ifdef:v --ed --ignore-tab-expansion --forward-ed " +
		"--show-function-line:v --ignore-case --ignore-matching-lines:v --paginate:L --label:v --rcs --new-file --show-c-function " +
		"--unidirectional-new-file --brief --recursive:L --report-identical-files --starting-file:v --expand-tabs --initial-tab --unified:v? " +
		"--ignore-all-space --width:v --exclude:v --exclude-from:r --side-by-side --strip-trailing-cr --from-file:r --to-file:r " +
		"--ignore-file-name-case --no-ignore-file-name-case --horizon-lines:v --line-format:v --old-line-format:v --new-line-format:v " +
		"--unchanged-line-format:v --old-group-format:v --new-group-format:v --changed-group-format:v --unchanged-group-format:v " +
		"--speed-large-files --suppress-common-lines --suppress-blank-empty --tabsize:v --left-column --color:v? --palette:v --normal " +
		"--no-dereference --ignore-trailing-space --sdiff-merge-assist" + specHelp,
	"column": "-t -s:v -o:v -c:v -x -n -e -J -N:v -l:v -R:v -H:v -W:v -d -O:v -E:v -T:v -r:v -L -S:v --table --separator:v " +
		"--output-separator:v --output-width:v --fillrows --table-columns:v --table-column:v --table-name:v --table-right:v --table-hide:v " +
		"--table-wrap:v --table-order:v --table-noextreme:v --table-truncate:v --table-noheadings --table-header-repeat --table-maxout " +
		"--tree:v --tree-id:v --tree-parent:v --json --keep-empty-lines --use-spaces:v --input-separator:v --table-columns-limit:v" + specHelp,
	"jq gojq jaq": "-n --null-input -R --raw-input -s --slurp -r --raw-output -j --join-output -a --ascii-output -c --compact-output " +
		"-C --color-output -M --monochrome-output -S --sort-keys --tab --indent:v --unbuffered --stream --stream-errors --seq -e --exit-status " +
		"-f:rp --from-file:rp -L:d --library-path:d --arg:2v --argjson:2v --slurpfile:2r --rawfile:2r --args --jsonargs --raw-output0 -0 " +
		"--binary -b -h -V --build-configuration --debug-dump-disasm --debug-trace --strip-comments --yaml-input --yaml-output" + specHelp,
	"md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum gmd5sum gsha256sum gsha1sum gsha512sum": specSums,
	"shasum": "-a:v --algorithm:v -b --binary -c:L --check:L -0 --01 -p --portable -s --status -t --text -U --UNIVERSAL --tag -w --warn --quiet --strict -h -v" + specHelp,
	"md5":    "-p -q -r -s:v -t -x -c:v",
	"which":  "-a -s --all --skip-alias --skip-functions --read-alias --read-functions --tty-only --show-dot --show-tilde -i -V" + specHelp,
	"whoami": specHelp,
	"id":     "-u -g -G -n -r -z -a -Z -p -P -A -F -M --user --group --groups --name --real --zero --context" + specHelp,
	"date gdate": "-d:v --date:v -f:r --file:r -I:v? --iso-8601:v? -R --rfc-email --rfc-822 --rfc-2822 --rfc-3339:v -r:r --reference:r " +
		"-s:L --set:L -u --utc --universal --debug -j -n -v:v -z:v" + specHelp,
	"uname":              "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release --kernel-version --machine --processor --hardware-platform --operating-system" + specHelp,
	"tac gtac":           "-b -r -s:v --before --regex --separator:v" + specHelp,
	"rev":                "-0 --zero" + specHelp,
	"fold gfold":         "-b -s -w:v --bytes --spaces --width:v +num" + specHelp,
	"fmt gfmt":           "-c -p:v -s -t -u -w:v -g:v -n -m -d:v -l:v --crown-margin --prefix:v --split-only --tagged-paragraph --uniform-spacing --width:v --goal:v +num" + specHelp,
	"expand gexpand":     "-i -t:v --initial --tabs:v +num" + specHelp,
	"unexpand gunexpand": "-a --all --first-only -t:v --tabs:v +num" + specHelp,
	"paste gpaste":       "-d:v -s -z --delimiters:v --serial --zero-terminated" + specHelp,
	"join gjoin":         "-a:v -e:v -i -j:v -o:v -t:v -v:v -1:v -2:v -z --check-order --nocheck-order --header --ignore-case --zero-terminated" + specHelp,
	"look":               "-b -d -f -a -t:v --alternative --alphanum --ignore-case --terminate:v" + specHelp,
	"seq gseq":           "-f:v -s:v -w -t:v --format:v --separator:v --equal-width" + specHelp,
	"sleep":              specHelp,
	"nproc":              "--all --ignore:v" + specHelp,
	"arch":               specHelp,
	"tty":                "-s --silent --quiet" + specHelp,
	"locale":             "-a -m -c -k -v --all-locales --charmaps --category-name --keyword-name --verbose" + specHelp,
	"getconf":            "-v:v -a",
	"whereis":            "-b -m -s -u -B:d -M:d -S:d -f -l -g",
	"cd pushd chdir":     "-L -P -e -@",

	// Other programs whose options name files or run programs (partial lists).
	"less zless": "+partial -o:w -O:w --log-file:w --LOG-FILE:w -k:r --lesskey-file:r --lesskey-src:r --lesskey-content:v -T:r --tag-file:r -t:v --tag:v " +
		"-p:v --pattern:v -P:v --prompt:v -x:v --tabs:v -y:v -z:v -b:v -h:v -j:v -D:v -#:v --shift:v --lesskey:r",
	"more": "+partial -n:v --lines:v",
	"bat batcat": "+partial -l:v --language:v -m:v --map-syntax:v --theme:v --style:v -r:v --line-range:v -H:v --highlight-line:v " +
		"--file-name:v --diff-context:v --tabs:v --wrap:v --terminal-width:v --pager:s --decorations:v --color:v --italic-text:v --paging:v " +
		"--config-file:r --nonprintable-notation:v --strip-ansi:v --binary:v",
	"sed gsed": "+partial -e:vp --expression:vp -f:rp --file:rp -i:v? --in-place:v? -l:v --line-length:v -s -n -E -r -u -z --posix --debug --sandbox " +
		"--follow-symlinks --null-data --separate --unbuffered --regexp-extended --quiet --silent",
	"awk gawk mawk nawk busybox-awk": specAwk,
	"curl curlie": "+partial -o:w --output:w -O --remote-name --remote-name-all -J -T:r --upload-file:r -K:r --config:r -c:w --cookie-jar:w " +
		"--output-dir:D -D:w --dump-header:w -d:@ --data:@ --data-ascii:@ --data-binary:@ --data-urlencode:@ --data-raw:v --json:@ " +
		"-F:F --form:F --form-string:v -H:@ --header:@ --proxy-header:@ -w:@ --write-out:@ --url-query:@ --variable:@ -b:m --cookie:m " +
		"-E:r --cert:r --key:r --cacert:r --capath:d --crlfile:r --netrc-file:r --trace:w --trace-ascii:w --stderr:w --libcurl:w " +
		"--hsts:w --alt-svc:w --etag-save:w --etag-compare:r --proxy-cacert:r --proxy-capath:d --proxy-cert:r --proxy-key:r --proxy-crlfile:r " +
		"--ssl-sessions:w --unix-socket:r --abstract-unix-socket:v --pinnedpubkey:m --proxy-pinnedpubkey:m --dns-servers:v " +
		"-u:v --user:v -U:v --proxy-user:v -X:v --request:v -A:v --user-agent:v -e:v --referer:v -x:v --proxy:v --preproxy:v -m:v --max-time:v " +
		"-r:v --range:v -Y:v -y:v -z:m --time-cond:m -C:v --continue-at:v -Q:v --quote:v --connect-timeout:v --retry:v --resolve:v " +
		"--connect-to:v --url:v --interface:v --local-port:v --max-filesize:v --limit-rate:v --proto:v --proto-redir:v --oauth2-bearer:v " +
		"--aws-sigv4:v --ciphers:v --ech:v --happy-eyeballs-timeout-ms:v --keepalive-time:v --expect100-timeout:v --parallel-max:v " +
		"--retry-delay:v --retry-max-time:v --speed-limit:v --speed-time:v --tls-max:v --tlsuser:v --tlspassword:v --max-redirs:v",
	"wget wget2": "+partial -O:w --output-document:w -o:w --output-file:w -a:w --append-output:w -P:D --directory-prefix:D -i:l --input-file:l " +
		"--post-file:r --body-file:r --load-cookies:r --save-cookies:w --ca-certificate:r --ca-directory:d --certificate:r --private-key:r " +
		"--crl-file:r --config:r -e:w --execute:w --warc-file:w --rejected-log:w --hsts-file:w --use-askpass:x -U:v --user-agent:v " +
		"-t:v --tries:v -T:v --timeout:v -w:v --wait:v -Q:v --quota:v -l:v --level:v -A:v --accept:v -R:v --reject:v --header:v --user:v " +
		"--password:v --post-data:v --method:v --body-data:v --referer:v --default-page:v -D:v --domains:v --exclude-domains:v -I:v -X:v",
	"tar gtar bsdtar": "+partial -f:v --file:v -C:C --directory:C -T:l --files-from:l -X:r --exclude-from:r -g:w --listed-incremental:w " +
		"-N:m --newer:m --after-date:m --newer-mtime:m -V:v --label:v -K:v --starting-file:v -I:x --use-compress-program:x --to-command:s " +
		"--info-script:x -F:x --new-volume-script:x --rsh-command:x --index-file:w --volno-file:w -b:v --blocking-factor:v -L:v --tape-length:v " +
		"-H:v --format:v --owner:v --group:v --mode:v --mtime:m --transform:v --xform:v --exclude:v --exclude-tag:v --exclude-tag-under:v " +
		"--exclude-tag-all:v --checkpoint-action:v --suffix:v --backup:v? --checkpoint:v? --remove-files --occurrence:v? --strip-components:v " +
		"--record-size:v --sparse-version:v --atime-preserve:v? --quoting-style:v --quote-chars:v --no-quote-chars:v --owner-map:r --group-map:r " +
		"--set-mtime-format:v --pax-option:v --hole-detection:v --xattrs-include:v --xattrs-exclude:v --warning:v --add-file:v --level:v " +
		"--one-top-level:v? -s:v --options:v",
	"xargs gxargs": "+partial -a:l --arg-file:l -d:v --delimiter:v -E:v -e:v? --eof:v? -I:v -i:v? --replace:v? -L:v -l:v? --max-lines:v? " +
		"-n:v --max-args:v -P:v --max-procs:v -s:v --max-chars:v --process-slot-var:v",
	"make gmake": "+partial -C:C --directory:C -f:r --file:r --makefile:r -I:d --include-dir:d -o:v --old-file:v --assume-old:v -W:v " +
		"--what-if:v --new-file:v --assume-new:v -j:v? --jobs:v? -l:v? --load-average:v? --max-load:v? --eval:s -O:v? --output-sync:v? " +
		"--debug:v? --jobserver-style:v --shuffle:v?",
	"ninja": "+partial -C:C -f:r -j:v -k:v -l:v -d:v -t:v -w:v",
	"patch gpatch": "+partial -i:r --input:r -o:w --output:w -d:C --directory:C -r:w --reject-file:w -B:v --prefix:v -D:v --ifdef:v " +
		"-F:v --fuzz:v -p:v --strip:v -V:v --version-control:v -Y:v --basename-prefix:v -z:v --suffix:v -g:v --get:v --quoting-style:v",
	"setfacl": "+partial -m:v --modify:v -M:r --modify-file:r -x:v --remove:v -X:r --remove-file:r --set:v --set-file:r --restore:r",
	"rsync": "+partial -e:x --rsh:x --rsync-path:v --filter:v -f:v --exclude:v --include:v --exclude-from:r --include-from:r --files-from:l " +
		"-T:D --temp-dir:D --partial-dir:D --backup-dir:D --suffix:v --chmod:v --chown:v --usermap:v --groupmap:v --port:v --password-file:r " +
		"--log-file:w --log-file-format:v --link-dest:d --compare-dest:d --copy-dest:d --timeout:v --contimeout:v --bwlimit:v --max-size:v " +
		"--min-size:v --max-delete:v --out-format:v --info:v --debug:v --read-batch:r --write-batch:w --only-write-batch:w --sockopts:v " +
		"--config:r --iconv:v --checksum-choice:v --compress-choice:v --compress-level:v --block-size:v --modify-window:v --stop-after:v " +
		"--stop-at:v --address:v --skip-compress:v --early-input:r",
	"zip":            "+partial +single -b:D -O:w --output-file:w -TT:s --unzip-command:s -n:v -P:v --password:v -t:v -tt:v -Z:v -s:v",
	"unzip":          "+partial -d:D -P:v -x:v -Z",
	"dig":            "+partial -f:r -k:r -b:v -c:v -p:v -q:v -t:v -x:v -y:v",
	"yq":             "+partial -i --inplace --from-file:rp --front-matter:v -o:v --output-format:v -p:v --input-format:v --expression:vp --split-exp:w --indent:v -I:v",
	"info":           "+partial -o:w --output:w -d:d --directory:d -f:r --file:r --dribble:w --restore:r --init-file:r",
	"man":            "+partial -P:s --pager:s -H:x --html:x? -M:d --manpath:d -C:r --config-file:r -l:r --local-file:r -p:v --preprocessor:v -E:v -L:v -m:v -S:v -s:v -e:v -R:v",
	"base64 gbase64": "+partial -i:r --input:r -o:w --output:w -w:v --wrap:v -b:v --break:v",
	"script":         "+partial -c:s --command:s -I:w --log-in:w -O:w --log-out:w -B:w --log-io:w -T:w --log-timing:w -m:v --logging-format:v -E:v --echo:v",
	"flock":          "+partial -c:s --command:s -w:v --timeout:v -E:v --conflict-exit-code:v",
	"go":             "+partial +single -C:C -o:w -modfile:r -overlay:r -pgo:r -toolexec:x -exec:x -coverprofile:w -cpuprofile:w -memprofile:w -blockprofile:w -mutexprofile:w -trace:w -outputdir:D",
	"npm":            "+partial -C:C --prefix:C --userconfig:r --globalconfig:r --cache:D",
	"yarn":           "+partial --cwd:C --cache-folder:D --modules-folder:D --use-yarnrc:r",
	"pnpm":           "+partial -C:C --dir:C --store-dir:D --global-dir:D",
	"bun":            "+partial --cwd:C",
	"vim vi nvim view gvim mvim ex rvim rview vimdiff": "+partial +single -es -Es -c:c --cmd:c -S:r -u:r -U:r -i:w -w:w -W:w -s:r -T:v -t:v -q:r --servername:v " +
		"--remote:v --remote-send:c --remote-expr:c --startuptime:w -V:w? --log:w",
	"emacs":                "+partial --eval:c -l:r --load:r -f:c --funcall:c --script:r -x:r -L:d --directory:d --chdir:C --init-directory:d -u:v --user:v",
	"emacsclient":          "+partial -e:c --eval:c",
	"strace ltrace":        "+partial -p:v --attach:v -o:w --output:w -e:v -s:v -u:v -E:v -P:v -a:v -b:v -I:v -S:v -X:v -O:v",
	"gdb":                  "+partial +single -p:v --pid:v -x:r --command:r -ex:c -eval-command:c --eval-command:c -iex:c -ix:r --init-command:r --init-eval-command:c -cd:C --cd:C -d:d --directory:d -s:r --symbols:r -e:r --exec:r -se:r -c:r --core:r",
	"lldb":                 "+partial -p:v --attach-pid:v -n:v --attach-name:v -o:c --one-line:c -O:c --one-line-before-file:c -s:r --source:r -S:r --source-before-file:r -c:r --core:r",
	"openssl":              "+partial +single -in:r -out:w -key:r -inkey:r -keyout:w -passin:v -passout:v -config:r -signkey:r -CAfile:r -CApath:d -cert:r -certfile:r -rand:r -writerand:w -infiles:r",
	"ssh-keygen":           "+partial -f:m -F:v -R:v -N:v -P:v -C:v -t:v -b:v -n:v -O:v -I:v -V:v -z:v -Y:v -s:r",
	"ssh-add":              "+partial -d:r -s:v -t:v -E:v -T:r",
	"git-credential-store": "+partial --file:r",
	"cp gcp":               "+partial -t:D --target-directory:D -S:v --suffix:v --backup:v? --sparse:v --reflink:v? --preserve:v? --no-preserve:v --context:v?",
	"mv gmv":               "+partial -t:D --target-directory:D -S:v --suffix:v --backup:v? --context:v?",
	"ln gln":               "+partial -t:D --target-directory:D -S:v --suffix:v --backup:v?",
	"install ginstall":     "+partial -t:D --target-directory:D -S:v --suffix:v -g:v --group:v -m:v --mode:v -o:v --owner:v --strip-program:x --context:v? --backup:v?",
	"scp":                  "+partial -c:v -F:r -i:v -J:v -l:v -o:v -P:v -S:x -D:v -X:v",
	"sftp":                 "+partial -B:v -b:r -c:v -D:x -F:r -i:v -J:v -l:v -o:v -P:v -R:v -S:x -s:v -X:v",
	"ssh autossh mosh":     "+partial -o:v -F:r -i:v -J:v -S:v -E:w -l:v -p:v -b:v -c:v -D:v -e:v -I:v -L:v -m:v -O:v -Q:v -R:v -W:v -w:v -B:v -P:v",
	"touch gtouch":         "+partial -d:v --date:v -r:r --reference:r -t:v --time:v",
	"mkdir gmkdir":         "+partial -m:v --mode:v --context:v?",
	"truncate gtruncate":   "+partial -s:v --size:v -r:r --reference:r",
	"shred gshred":         "+partial -n:v --iterations:v -s:v --size:v --random-source:r --remove:v?",
	"tee gtee":             "+partial --output-error:v?",
	"rm grm unlink":        "+partial --interactive:v? --one-file-system --preserve-root:v? --no-preserve-root",
	"chattr":               "+partial -v:v -p:v",
	"split gsplit":         "+partial -a:v --suffix-length:v --additional-suffix:v -b:v --bytes:v -C:v --line-bytes:v -l:v --lines:v -n:v --number:v -t:v --separator:v --filter:s",
	"csplit gcsplit":       "+partial -b:v --suffix-format:v -f:w --prefix:w -n:v --digits:v",
	"ffmpeg":               "+partial +single -i:r -f:v -c:v -codec:v -vf:v -af:v -filter_complex:v -map:v -ss:v -t:v -to:v -r:v -s:v -b:v -ab:v -vb:v -ar:v -ac:v -q:v -crf:v -preset:v -metadata:v -loglevel:v -filter_script:r -progress:w -report -passlogfile:w -vstats_file:w -dump_attachment:v -attach:r",
}

// quietPrograms only read, and are quiet when every name they read is in the folder and every
// option they get is one their spec knows to read nothing more (quietCommand, quietArgs).
var quietPrograms = set("ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "fd", "tree", "file", "stat",
	"du", "pwd", "echo", "printf", "true", "false", "test", "[", "basename", "dirname", "realpath", "readlink", "sort", "uniq",
	"cut", "tr", "nl", "od", "hexdump", "xxd", "strings", "cmp", "comm", "diff", "column", "jq", "md5sum", "sha1sum", "sha256sum",
	"sha512sum", "shasum", "cksum", "b2sum", "md5", "which", "type", "whoami", "id", "date", "uname", "git", "cd", "pushd", "tac",
	"rev", "fold", "fmt", "expand", "unexpand", "paste", "join", "look", "seq", "sleep", "nproc", "arch", "tty", "locale",
	"getconf", "expr", "whereis")

// bareQuiet are quiet reads whose words the shell or the judge reads otherwise: they need no spec.
var bareQuiet = set("echo", "printf", "true", "false", "test", "[", "type", "expr", "find", "git")

// options reads what a command's options run: a program or shell line an option names is read
// as a command of its own (rg --pre ./x, sort --compress-program, bat --pager), fd -x's command
// too; inline code is kept for its paths; a folder the program works in moves its folder.
func (r *reader) options(cmd *command, st *state) {
	pa := cmd.opts()
	if pa == nil {
		return
	}
	for _, v := range pa.vals {
		switch {
		case v.role&(rProg|rShell) != 0:
			cmd.runs = true
			r.code(v.w, st)
		case v.role&rCode != 0:
			cmd.inline = append(cmd.inline, v.w)
		case v.role&rList != 0:
			cmd.listed = true
		case v.role&rChdir != 0 && !isTar(cmd.prog):
			if v.w.known && !v.w.glob {
				cmd.cwd = resolve(cmd.cwd, v.w.val)
			} else {
				cmd.cwd = ""
			}
		}
	}
	if len(pa.rest) > 0 {
		cmd.runs = true
		inner := make([]word, 0, len(pa.rest))
		for _, w := range pa.rest {
			if strings.Contains(w.val, "{") {
				// fd's placeholders ({}, {/}, {//}, {.}, {/.}) stand for what it finds.
				w.val, w.known, w.found = unknown, false, true
			}
			inner = append(inner, w)
		}
		sub := &command{cwd: cmd.cwd, extraArgs: true, admin: cmd.admin, wrappers: []string{cmd.prog}}
		r.run(sub, inner, st)
	}
	if isEditor(cmd.prog) {
		// vim +cmd: an Ex command, like -c.
		for _, a := range cmd.args[1:] {
			if strings.HasPrefix(a.val, "+") && len(a.val) > 1 {
				cmd.inline = append(cmd.inline, a)
			}
		}
	}
}

func isTar(p string) bool { return p == "tar" || p == "gtar" || p == "bsdtar" }

func isEditor(p string) bool {
	switch p {
	case "vim", "vi", "nvim", "view", "gvim", "mvim", "ex", "rvim", "rview", "vimdiff":
		return true
	}
	return false
}
