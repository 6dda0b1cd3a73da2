package judge

import "strings"

// subcommandTools name their action in their first operand (git commit, go test, docker build).
var subcommandTools = set("git", "go", "cargo", "make", "docker", "podman", "gh", "kubectl", "pip", "pip3",
	"poetry", "uv", "dotnet", "mvn", "gradle", "gradlew", "swift", "brew", "deno", "rustup", "terraform",
	"helm", "composer", "bundle", "rake", "mix", "stack", "cabal", "flutter", "dart", "nx", "turbo", "just",
	"task", "pytest", "tox", "nox", "rails", "php", "artisan", "hugo", "zig", "bazel", "buck", "ninja", "cmake")

var runners = set("npm", "pnpm", "yarn", "bun")

// CommandKind names the kinds of the commands in a shell line, as "allow for this run" matches
// them (commandKind): the program and its action or script ("npm run build", "git commit",
// "python3 scripts/gen.py", "npx playwright test"). Inline code, variables, VAR= prefixes,
// remote hosts and options before the action make a kind that matches only that very command.
func CommandKind(line string) []string {
	s := Settings{Folder: "/", Home: "/nonexistent-home"}
	r := readLine(&s, line, "/")
	var out []string
	for _, c := range r.cmds {
		if k := CommandKindOf(c); k != "" {
			out = appendUnique(out, k)
		}
	}
	return out
}

// CommandKindOf is one command's kind.
func CommandKindOf(c *command) string {
	if c.prog == "" && !c.progUnknown {
		return ""
	}
	whole := strings.TrimSpace(c.words())
	if c.progUnknown || c.assigns || c.code || len(c.inline) > 0 || len(c.wrappers) > 0 || hasKey(remotePrograms, c.prog) || c.admin {
		return whole
	}
	for _, a := range c.args {
		if !a.known || a.vars || a.subst {
			return whole
		}
	}
	name := c.prog
	args := c.args
	action := func(i int) (string, bool) {
		if i < len(args) && !strings.HasPrefix(args[i].val, "-") {
			return args[i].val, true
		}
		return "", false
	}
	switch {
	case hasKey(runners, name):
		a, ok := action(1)
		if !ok {
			if len(args) == 1 {
				return name
			}
			return whole
		}
		if a == "run" || a == "run-script" || name == "pnpm" && a == "exec" || a == "x" || a == "dlx" {
			if b, ok := action(2); ok {
				return name + " " + a + " " + b
			}
		}
		return name + " " + a
	case name == "npx" || name == "bunx" || name == "pnpx" || name == "uvx" || name == "pipx":
		i := 1
		for i < len(args) && strings.HasPrefix(args[i].val, "-") {
			i++
		}
		pkg, ok := action(i)
		if !ok {
			return whole
		}
		if b, ok := action(i + 1); ok {
			return name + " " + pkg + " " + b
		}
		return name + " " + pkg
	case isShell(name) || isInterpreter(name) || name == "source" || name == ".":
		if c.script > 0 && c.script < len(args) {
			if c.script > 1 {
				return whole
			}
			return name + " " + args[c.script].val
		}
		return whole
	case hasKey(subcommandTools, name):
		a, ok := action(1)
		if !ok {
			if len(args) == 1 {
				return name
			}
			return whole
		}
		return name + " " + a
	}
	return name
}
