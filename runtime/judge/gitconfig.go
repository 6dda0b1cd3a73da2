package judge

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxIncludes is how deep git config includes are followed (git's own limit is 10).
const maxIncludes = 10

// GitConfigClean reports whether git config files (a repository's config and config.worktree),
// with every file they include, set nothing that makes git run a program or bring in code: a
// pager, an editor, a diff, merge or filter driver, textconv, fsmonitor, a hooks folder, a
// credential helper, another work tree. Read-only git runs without asking only then
// ([Settings.GitConfigClean]). read reads a file; a file that does not exist is fine, as git
// skips it; one that cannot be read is not. home expands ~/ in include paths. Aliases do not
// count: git never lets one replace a command of its own.
func GitConfigClean(files []string, read func(string) ([]byte, error), home string) bool {
	seen := map[string]bool{}
	var clean func(file string, depth int) bool
	clean = func(file string, depth int) bool {
		if depth > maxIncludes {
			return false
		}
		if seen[file] {
			return true
		}
		seen[file] = true
		b, err := read(file)
		if err != nil {
			return errors.Is(err, fs.ErrNotExist)
		}
		ok := true
		parseGitConfig(string(b), func(key, value string) bool {
			k := strings.ToLower(key)
			if strings.HasPrefix(k, "include.") && strings.HasSuffix(k, ".path") || strings.HasPrefix(k, "includeif.") && strings.HasSuffix(k, ".path") {
				p := value
				switch {
				case strings.HasPrefix(p, "~/"):
					if home == "" {
						ok = false
						return false
					}
					p = filepath.Join(home, p[2:])
				case !filepath.IsAbs(p):
					p = filepath.Join(filepath.Dir(file), p)
				}
				if !clean(filepath.Clean(p), depth+1) {
					ok = false
					return false
				}
				return true
			}
			if gitKeyKind(key) != gitKeyAlias && gitKeyRunsCode(key, value) {
				ok = false
				return false
			}
			return true
		})
		return ok
	}
	for _, f := range files {
		if !clean(f, 0) {
			return false
		}
	}
	return true
}

// parseGitConfig calls each for every key and value of a git config file, until it returns false.
// Keys are section[.subsection].name; a key with no value is true, as git reads it. A line it
// cannot read is passed on as a key that runs code, so nothing it hides is taken for clean.
func parseGitConfig(text string, each func(key, value string) bool) {
	section := ""
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				each("core.fsmonitor", "unreadable section")
				return
			}
			head := strings.TrimSpace(line[1:end])
			if sp := strings.IndexAny(head, " \t"); sp >= 0 {
				sub := strings.TrimSpace(head[sp:])
				sub = strings.TrimSuffix(strings.TrimPrefix(sub, `"`), `"`)
				sub = strings.ReplaceAll(strings.ReplaceAll(sub, `\"`, `"`), `\\`, `\`)
				section = strings.ToLower(head[:sp]) + "." + sub
			} else {
				section = strings.ToLower(head)
			}
			line = strings.TrimSpace(line[end+1:])
			if line == "" || line[0] == '#' || line[0] == ';' {
				continue
			}
		}
		name, rest, hasValue := strings.Cut(line, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" || section == "" {
			each("core.fsmonitor", "unreadable line")
			return
		}
		value := "true"
		if hasValue {
			v := strings.TrimSpace(rest)
			// A value goes on to the next line after a backslash at its end.
			for strings.HasSuffix(v, `\`) && !strings.HasSuffix(v, `\\`) && i+1 < len(lines) {
				i++
				v = v[:len(v)-1] + lines[i]
			}
			value = configValue(v)
		}
		if !each(section+"."+name, value) {
			return
		}
	}
}

// configValue is a git config value with its quotes, escapes and comment taken off.
func configValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
