// Package playbooks holds the built-in playbooks: Markdown files that tell the model how to use
// the tools for one request area (spec 000 §3, §10.1). The tools' hub_how_to reads them, wherever
// the tools run (the assistant or the bridge); the assistant routes a message to them.
//
// Their front matter is key: value lines between "---" lines:
//
//	name      what hub_how_to takes (required)
//	title     a few words (required)
//	when      the index line: what requests it covers (required)
//	tools     the tools shown while it is loaded, comma-separated
//	match     a regular expression of words that preload it (case-insensitive)
//	paths     open paths that add to its score (a tie-break only), comma-separated prefixes
//	mentions  kinds of record linked in the message that preload it, comma-separated
package playbooks

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

//go:embed *.md
var files embed.FS

// Playbook is one parsed playbook.
type Playbook struct {
	Name, Title, When string
	Tools             []string
	Match             *regexp.Regexp
	Paths             []string
	Mentions          []string
	// Body is the Markdown after the front matter.
	Body string
}

// builtin are the embedded playbooks, by name; they never change once parsed.
var builtin = mustLoad(files)

// Builtin returns the embedded playbooks, sorted by name. They are shared: do not change them.
func Builtin() []*Playbook { return builtin }

func mustLoad(fsys fs.FS) []*Playbook {
	pbs, err := Load(fsys)
	if err != nil {
		panic(err)
	}
	return pbs
}

// Load parses every *.md at the top of fsys, sorted by name.
func Load(fsys fs.FS) ([]*Playbook, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	var out []*Playbook
	seen := map[string]bool{}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		p, err := Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("playbooks: %s: %w", path.Base(n), err)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("playbooks: %s: the name %q is taken", path.Base(n), p.Name)
		}
		seen[p.Name] = true
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Parse reads a playbook's front matter and body.
func Parse(src string) (*Playbook, error) {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	rest, ok := strings.CutPrefix(src, "---\n")
	if !ok {
		return nil, fmt.Errorf("it must start with a --- front matter line")
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return nil, fmt.Errorf("its front matter has no closing --- line")
	}
	p := &Playbook{Body: strings.TrimSpace(body)}
	for _, line := range strings.Split(head, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("front matter line %q is not key: value", line)
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "name":
			p.Name = v
		case "title":
			p.Title = v
		case "when":
			p.When = v
		case "tools":
			p.Tools = splitList(v)
		case "match":
			re, err := regexp.Compile("(?i)" + v)
			if err != nil {
				return nil, fmt.Errorf("match: %w", err)
			}
			p.Match = re
		case "paths":
			p.Paths = splitList(v)
		case "mentions":
			p.Mentions = splitList(v)
		default:
			return nil, fmt.Errorf("unknown front matter key %q", strings.TrimSpace(k))
		}
	}
	if p.Name == "" || p.Title == "" || p.When == "" {
		return nil, fmt.Errorf("name, title and when are required")
	}
	return p, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Find returns the playbook of pbs named, or nil.
func Find(pbs []*Playbook, name string) *Playbook {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, p := range pbs {
		if p.Name == name {
			return p
		}
	}
	return nil
}
