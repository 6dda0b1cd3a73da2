package judge

import (
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
)

type gitCall struct {
	sub   string
	pre   bool   // options before the subcommand
	cwd   string // after -C
	rest  []word // the words after the subcommand
	alias string // what -c alias.<sub>=… makes the subcommand run, if it does
}

func parseGit(c *command) gitCall {
	g := gitCall{cwd: c.cwd}
	aliases := map[string]string{}
	i := 1
	for i < len(c.args) {
		w := c.args[i]
		v := w.val
		if !strings.HasPrefix(v, "-") {
			break
		}
		g.pre = true
		switch v {
		case "-C":
			if i+1 < len(c.args) && c.args[i+1].known {
				g.cwd = resolve(g.cwd, c.args[i+1].val)
			} else {
				g.cwd = ""
			}
			i += 2
			continue
		case "-c":
			if i+1 < len(c.args) {
				if k, v, ok := strings.Cut(c.args[i+1].val, "="); ok && strings.HasPrefix(strings.ToLower(k), "alias.") {
					aliases[strings.ToLower(k[len("alias."):])] = v
				}
			}
			i += 2
			continue
		case "--git-dir", "--work-tree":
			// Another repository or work tree: what git reads and writes is there.
			if i+1 < len(c.args) && c.args[i+1].known {
				g.cwd = resolve(g.cwd, c.args[i+1].val)
			} else {
				g.cwd = ""
			}
			i += 2
			continue
		case "--namespace", "--config-env", "--super-prefix":
			i += 2
			continue
		}
		if strings.HasPrefix(v, "--git-dir=") || strings.HasPrefix(v, "--work-tree=") {
			_, d, _ := strings.Cut(v, "=")
			if c.args[i].known {
				g.cwd = resolve(g.cwd, d)
			} else {
				g.cwd = ""
			}
		}
		i++
	}
	for _, e := range []string{"GIT_WORK_TREE", "GIT_DIR"} {
		if w, ok := c.envs[e]; ok {
			g.pre = true
			if w.known {
				g.cwd = resolve(g.cwd, w.val)
			} else {
				g.cwd = ""
			}
		}
	}
	if i < len(c.args) {
		g.sub = c.args[i].val
		g.rest = c.args[i+1:]
	}
	if a, ok := aliases[strings.ToLower(g.sub)]; ok {
		// git -c alias.x=push x pushes: judge the subcommand the alias names. An alias that
		// starts with ! is a shell command, which git() asks about.
		g.alias = a
		if f := strings.Fields(a); len(f) > 0 && !strings.HasPrefix(a, "!") {
			g.sub = f[0]
		}
	}
	return g
}

var (
	gitReadOnly = set("status", "log", "diff", "show", "blame", "ls-files", "ls-tree", "cat-file", "rev-parse",
		"rev-list", "describe", "shortlog", "branch", "tag", "remote", "stash", "config", "grep", "reflog",
		"whatchanged", "show-ref", "for-each-ref", "merge-base", "name-rev", "count-objects", "version", "help", "worktree", "check-ignore", "var")
	gitCommits = set("commit", "merge", "rebase", "cherry-pick", "revert", "am", "pull", "commit-tree",
		"filter-branch", "filter-repo", "squash", "update-ref")
	gitNetwork = set("push", "pull", "fetch", "clone", "ls-remote", "send-email", "svn", "request-pull",
		"send-pack", "fetch-pack", "http-fetch", "http-push", "p4", "cvsimport", "cvsexportcommit")
	// gitPushes send commits to another computer.
	gitPushes = set("push", "send-pack", "http-push")
	// gitOther are git's other own commands: with none of these, nor the sets above, the
	// subcommand may be an alias from a config file, which can run anything.
	gitOther = set("add", "rm", "mv", "checkout", "switch", "restore", "reset", "init", "clean", "submodule",
		"lfs", "subtree", "apply", "bisect", "gc", "fsck", "prune", "notes", "sparse-checkout", "archive",
		"bundle", "format-patch", "mergetool", "difftool", "update-index", "symbolic-ref", "hash-object",
		"write-tree", "read-tree", "mktree", "mktag", "pack-refs", "repack", "maintenance", "range-diff",
		"rerere", "annotate", "column", "check-attr", "check-ref-format", "interpret-trailers",
		"mailinfo", "mailsplit", "diff-tree", "diff-files", "diff-index", "verify-commit",
		"verify-tag", "replace", "stripspace", "unpack-objects", "pack-objects", "index-pack",
		"merge-file", "merge-tree", "patch-id", "get-tar-commit-id", "credential",
		"backfill", "citool", "gui", "gitk", "instaweb", "bugreport", "diagnose", "init-db",
		"fsmonitor--daemon", "scalar", "cherry", "show-branch", "multi-pack-index", "commit-graph")
)

// gitRest is git's words after the subcommand as a command of their own, for operands().
func gitRest(g gitCall) *command {
	return &command{prog: "git", args: append([]word{lit("git")}, g.rest...)}
}

// gitPaths are the files a git command names.
func gitPaths(c *command) []access {
	g := parseGit(c)
	if g.sub == "" || g.sub == "clone" || g.sub == "config" || g.sub == "remote" {
		return nil
	}
	write := !hasKey(gitReadOnly, g.sub)
	if g.sub == "worktree" || g.sub == "stash" {
		// Their list and show read; add, move, remove, push and pop change files.
		write = true
		if len(g.rest) == 0 || g.rest[0].val == "list" || g.rest[0].val == "show" {
			write = false
		}
	}
	var acc []access
	rest := gitRest(g)
	ops := operands(rest)
	if sp := gitSubOpts[g.sub]; sp != nil {
		pa := parseArgs(sp, rest.args)
		ops = pa.ops
		for _, v := range pa.vals {
			if v.role&rTakesValue == 0 || v.w.val == "-" {
				continue
			}
			switch {
			case v.role&(rRead|rDir) != 0:
				acc = append(acc, access{w: v.w, cwd: g.cwd})
			case v.role&(rWrite|rOutDir) != 0:
				acc = append(acc, access{w: v.w, write: true, cwd: g.cwd})
			}
		}
	}
	for _, o := range ops {
		if _, ok := looksRemote(o.val); ok {
			continue
		}
		if g.sub == "commit" || g.sub == "push" || g.sub == "fetch" || g.sub == "pull" || g.sub == "checkout" || g.sub == "switch" || g.sub == "merge" || g.sub == "rebase" || g.sub == "branch" || g.sub == "tag" || g.sub == "stash" || g.sub == "reset" || g.sub == "cherry-pick" || g.sub == "revert" || g.sub == "log" || g.sub == "show" || g.sub == "diff" {
			// refs, remotes and revisions, mostly: only names with a slash or dot count as files.
			if !strings.ContainsAny(o.val, "/.") || strings.Contains(o.val, "..") && !strings.HasPrefix(o.val, "..") {
				continue
			}
		}
		acc = append(acc, access{w: o, write: write, cwd: g.cwd})
	}
	if g.cwd != c.cwd && g.cwd != "" {
		acc = append(acc, access{w: lit(g.cwd), write: write})
	}
	return acc
}

// git applies the git permission, the internet setting and "ask before each commit".
func (j *judgement) git(c *command, src string) []access {
	g := parseGit(c)
	sub := g.sub
	net := hasKey(gitNetwork, sub) || sub == "remote" && len(g.rest) > 0 && (g.rest[0].val == "update" || g.rest[0].val == "show" || g.rest[0].val == "prune") ||
		sub == "submodule" && len(g.rest) > 0 && (g.rest[0].val == "update" || g.rest[0].val == "add") || sub == "lfs" && len(g.rest) > 0 && (g.rest[0].val == "fetch" || g.rest[0].val == "pull" || g.rest[0].val == "push")
	net = net || sub == "archive" && hasFlag(gitRest(g).args, "", "remote")
	if net && !j.s.Internet {
		j.refuse(rankSetting, "internet-off", "`git "+sub+"` reaches another computer, and this run has the internet off; turn the internet on in the run's settings to let it.")
	}
	for _, why := range c.opaque {
		j.ask("git-code", src+" runs code from git's configuration Ensemble cannot read ("+why+"), so it waits for your answer.", "")
	}
	c.opaque = nil // asked about here
	if c.gitConfigCode != "" {
		j.ask("git-config-code", src+" sets "+c.gitConfigCode+", which makes every later git command run a program, outside this run's rules; each such change waits for your answer.", "")
	}
	if strings.HasPrefix(sub, "credential") && sub != "credential" || sub == "credential" && len(g.rest) > 0 && !strings.HasPrefix(g.rest[0].val, "-") {
		j.refuse(rankNever, "never", "`git "+sub+"` reads or changes saved passwords and tokens, which a run may never do.")
	}
	extra := j.gitConfigFile(c, g)
	if strings.HasPrefix(g.alias, "!") {
		j.ask("unreadable", src+" runs a shell command hidden in a git alias, which Ensemble cannot read, so it waits for your answer.", "")
	} else if sub != "" && !strings.HasPrefix(sub, "-") && !hasKey(gitReadOnly, sub) && !hasKey(gitCommits, sub) && !hasKey(gitNetwork, sub) && !hasKey(gitOther, sub) &&
		(j.s.Git != GitAny || !j.s.Internet || j.s.AskBeforeCommit) {
		j.ask("git-unknown", "`git "+sub+"` is not a git command Ensemble knows; it may be an alias that commits or pushes, which this run's settings limit, so it waits for your answer.", "")
	}
	push := hasKey(gitPushes, sub) || sub == "subtree" && len(g.rest) > 0 && g.rest[0].val == "push" || sub == "lfs" && len(g.rest) > 0 && g.rest[0].val == "push"
	commits := hasKey(gitCommits, sub)
	switch j.s.Git {
	case GitAny:
	case GitCommit:
		if push {
			j.refuse(rankSetting, "git-commit-only", "`git "+sub+"` sends commits to another computer, and this run's git permission stops at Commit; change it to No limits to let it.")
		}
	default:
		// Commit stops short of pushes, so a push is let only by No limits.
		if push {
			j.refuse(rankSetting, "git-local", "`git "+sub+"` sends commits to another computer, and this run's git permission is Local only; change it to No limits to let it.")
		} else if commits {
			j.refuse(rankSetting, "git-local", "`git "+sub+"` changes the repository's history, and this run's git permission is Local only; change it to Commit to let it.")
		}
	}
	if j.s.AskBeforeCommit && commits {
		j.ask("git-ask-commit", "You asked to approve each commit: "+src+".", "")
	}
	if sub == "clone" && !j.s.Sandbox {
		if dest := cloneDest(g); dest != "" {
			return append(append(gitPaths(c), extra...), access{w: lit(dest), write: true, cwd: g.cwd})
		}
	}
	return append(gitPaths(c), extra...)
}

// gitConfigFile is the config file git config reads or writes, when it is not the repository's:
// --global is ~/.gitconfig (a start-up file), --system /etc/gitconfig, --file names one.
func (j *judgement) gitConfigFile(c *command, g gitCall) []access {
	if g.sub != "config" {
		return nil
	}
	var f word
	found := false
	for i := 0; i < len(g.rest); i++ {
		v := g.rest[i].val
		switch {
		case v == "--global":
			f, found = lit(filepath.Join(j.s.Home, ".gitconfig")), j.s.Home != ""
		case v == "--system":
			f, found = lit("/etc/gitconfig"), true
		case (v == "-f" || v == "--file") && i+1 < len(g.rest):
			f, found = g.rest[i+1], true
			i++
		case strings.HasPrefix(v, "--file="):
			f, found = g.rest[i], true
			f.val = strings.TrimPrefix(v, "--file=")
		}
	}
	if !found {
		return nil
	}
	return []access{{w: f, write: c.gitConfigWrites, cwd: g.cwd}}
}

// quietGit: read-only git runs without asking only with the sandbox on, in a repository whose
// config cannot start a program (no pager, diff or filter driver, fsmonitor, hooks or include),
// and with options the judge knows for the subcommand.
func (j *judgement) quietGit(c *command) bool {
	if !j.s.Sandbox || c.cwd == "" {
		return false
	}
	if c.cwd == j.s.Folder {
		if !j.s.GitConfigClean {
			return false
		}
	} else if j.s.GitCleanAt == nil || !j.s.GitCleanAt(c.cwd) {
		return false
	}
	g := parseGit(c)
	if g.pre || !hasKey(gitReadOnly, g.sub) {
		return false
	}
	rest := gitRest(g)
	sp := gitSubOpts[g.sub]
	if sp == nil || sp.partial {
		return false
	}
	pa := parseArgs(sp, rest.args)
	if len(pa.unknown) > 0 || pa.loud {
		return false
	}
	for _, v := range pa.vals {
		if v.role&(rWrite|rOutDir|rProg|rShell) != 0 {
			return false
		}
	}
	ops := pa.ops
	has := func(names ...string) bool { return pa.has(names...) }
	switch g.sub {
	case "branch", "tag":
		if len(ops) > 0 && !has("-l", "--list", "--contains", "--merged", "--no-merged", "--points-at") {
			return false
		}
		if has("-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force", "-u", "--set-upstream-to",
			"--unset-upstream", "--edit-description", "-a", "--annotate", "-s", "--sign", "-u", "--local-user", "-m", "--message",
			"-F", "--file", "-e", "--edit", "--create-reflog", "-t", "--track", "--trailer") && !(g.sub == "branch" && has("-a", "--all") &&
			!has("-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force")) {
			return false
		}
	case "remote":
		return len(ops) == 0
	case "stash":
		return len(ops) > 0 && (ops[0].val == "list" || ops[0].val == "show")
	case "config":
		return has("-l", "--get", "--get-all", "--get-regexp", "--list") && !has("--file", "-f", "--blob") ||
			len(ops) > 0 && (ops[0].val == "get" || ops[0].val == "list")
	case "worktree":
		return len(ops) > 0 && ops[0].val == "list"
	case "reflog":
		return len(ops) == 0 || ops[0].val == "show"
	case "help":
		return !has("-w", "--web", "-i", "--info")
	}
	return true
}

func (j *judgement) gh(c *command, src string) {
	if !j.s.Internet {
		j.refuse(rankSetting, "internet-off", "`gh` reaches GitHub, and this run has the internet off; turn the internet on in the run's settings to let it.")
		return
	}
	ops := operands(c)
	if len(ops) == 0 || j.s.Git == GitAny {
		return
	}
	area, verb := ops[0].val, ""
	if len(ops) > 1 {
		verb = ops[1].val
	}
	writes := false
	switch area {
	case "pr":
		writes = verb != "list" && verb != "view" && verb != "status" && verb != "diff" && verb != "checks" && verb != "checkout"
	case "repo":
		writes = verb != "list" && verb != "view" && verb != "clone"
	case "release":
		writes = verb != "list" && verb != "view" && verb != "download"
	case "api":
		m, _ := optValue(c.args, 'X', "method")
		writes = m.val != "" && !strings.EqualFold(m.val, "GET") || hasFlag(c.args, "fF", "field", "raw-field", "input")
	}
	if writes {
		perm := "Local only"
		if j.s.Git == GitCommit {
			perm = "Commit"
		}
		j.refuse(rankSetting, "git-gh", src+" changes the repository on GitHub, and this run's git permission is "+perm+"; change it to No limits to let it.")
	}
}

func cloneDest(g gitCall) string {
	ops := operands(gitRest(g))
	if len(ops) >= 2 {
		return ops[1].val
	}
	if len(ops) == 1 {
		u := strings.TrimSuffix(strings.TrimRight(ops[0].val, "/"), ".git")
		if i := strings.LastIndexAny(u, "/:"); i >= 0 {
			return u[i+1:]
		}
	}
	return ""
}

// cloneRule: with the sandbox on, the judge clones for the agent (cloneForAgent), only for
// `git clone <public https URL> [folder]` alone or first in a line.
func (j *judgement) cloneRule(r *reader) {
	if !j.s.Sandbox {
		return
	}
	for _, c := range r.cmds {
		if c.prog != "git" {
			continue
		}
		g := parseGit(c)
		if g.sub != "clone" {
			continue
		}
		if !j.s.Internet {
			return // refused already
		}
		if j.clone != nil || !c.first || c.pipe != 0 || len(c.wrappers) > 0 || c.assigns || g.pre {
			j.refuse(rankClone, "clone-not-first", "With the sandbox on, Ensemble does the clone itself, and only for `git clone <https address> [folder]` alone or first in a command; run the clone on its own first.")
			return
		}
		cl, why := j.cloneOf(c, g)
		if why != "" {
			j.refuse(rankClone, "clone-refused", why)
			return
		}
		cl.Rest = len(r.cmds) > 1
		j.clone = cl
	}
}

func (j *judgement) cloneOf(c *command, g gitCall) (*Clone, string) {
	cl := &Clone{}
	var ops []word
	rest := g.rest
	for i := 0; i < len(rest); i++ {
		v := rest[i].val
		if !rest[i].known {
			return nil, "Ensemble clones only a repository named plainly, without variables or $(…)."
		}
		next := func() (string, bool) {
			if i+1 < len(rest) {
				i++
				return rest[i].val, true
			}
			return "", false
		}
		switch {
		case v == "--":
			for _, w := range rest[i+1:] {
				ops = append(ops, w)
			}
			i = len(rest)
		case strings.HasPrefix(v, "--template"):
			return nil, "A clone with `--template` could plant hooks, so Ensemble does not clone with it; clone without it."
		case v == "--depth" || v == "--branch" || v == "-b" || v == "--filter":
			val, ok := next()
			if !ok {
				return nil, "`git clone " + v + "` needs a value."
			}
			cl.set(v, val)
		case strings.HasPrefix(v, "--depth=") || strings.HasPrefix(v, "--branch=") || strings.HasPrefix(v, "--filter="):
			k, val, _ := strings.Cut(v, "=")
			cl.set(k, val)
		case v == "--single-branch":
			cl.SingleBranch = true
		case v == "--no-tags":
			cl.NoTags = true
		case v == "--quiet" || v == "-q":
			cl.Quiet = true
		case strings.HasPrefix(v, "-"):
			return nil, "Ensemble clones with only --depth, --branch, --single-branch, --filter, --no-tags and --quiet; `" + v + "` is not one of them."
		default:
			ops = append(ops, rest[i])
		}
	}
	if len(ops) == 0 || len(ops) > 2 {
		return nil, "Ensemble clones `git clone <https address> [folder]`; name one address and at most one folder."
	}
	raw := ops[0].val
	if why := publicHTTPS(raw); why != "" {
		return nil, why
	}
	cl.URL = raw
	dest := cloneDest(g)
	if dest == "" {
		return nil, "Ensemble cannot tell which folder `" + raw + "` would clone into; name one."
	}
	cwd := g.cwd
	dir := resolve(cwd, dest)
	if dir == "" || !within(dir, j.s.Folder) || dir == j.s.Folder {
		return nil, "Ensemble clones only into a new folder inside the run folder; `" + dest + "` is not one."
	}
	cl.Dir = filepath.Clean(dir)
	return cl, ""
}

func (cl *Clone) set(k, v string) {
	switch k {
	case "--depth":
		cl.Depth = v
	case "--branch", "-b":
		cl.Branch = v
	case "--filter":
		cl.Filter = v
	}
}

// publicHTTPS checks a clone address: public https, no user name, query, fragment or port.
func publicHTTPS(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		if strings.HasPrefix(raw, "file:") || err == nil && u.Scheme == "file" {
			return "Ensemble does not clone `file://` addresses; clone from a public https address."
		}
		return "Ensemble clones only public https addresses; `" + raw + "` is not one."
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Port() != "" || u.Opaque != "" {
		return "Ensemble clones only a plain https address, without a user name, query or port; `" + raw + "` has one."
	}
	h := u.Hostname()
	if h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".local") || strings.HasSuffix(h, ".internal") || !strings.Contains(h, ".") {
		return "Ensemble clones only from public servers; `" + h + "` is not one."
	}
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalMulticast() {
			return "Ensemble clones only from public servers; `" + h + "` is not one."
		}
	}
	return ""
}
