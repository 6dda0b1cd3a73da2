package computer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// GitRequest is one computer_git read.
type GitRequest struct {
	Op     string   `json:"op" jsonschema:"status, diff, log, show or branch" check:"enum=status|diff|log|show|branch"`
	Folder string   `json:"folder,omitempty" jsonschema:"the repository's folder; your own folder when left out" check:"maxLength=1000"`
	Ref    string   `json:"ref,omitempty" jsonschema:"a commit, branch or range (diff, log, show)" check:"maxLength=200"`
	Paths  []string `json:"paths,omitempty" jsonschema:"limit to these paths in the repository" check:"maxItems=20,items.maxLength=500"`
	Staged bool     `json:"staged,omitempty" jsonschema:"diff: what is staged for the next commit"`
	Stat   bool     `json:"stat,omitempty" jsonschema:"diff, show: only the files and counts"`
	Limit  int      `json:"limit,omitempty" jsonschema:"log: how many commits (20 by default)" check:"minimum=1,maximum=500"`
}

var refRe = regexp.MustCompile(`^[A-Za-z0-9._/~^@{}:+-]+$`)

// GitLine is the git command line a read runs: only reads, with nothing in the repository's
// config able to run a program (no pager, external diff, text conversion or fsmonitor).
func GitLine(r GitRequest) (string, error) {
	words := []string{"git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "diff.external=", "-c", "core.pager=cat", "-c", "color.ui=false"}
	switch r.Op {
	case "status":
		words = append(words, "status", "--short", "--branch")
	case "diff":
		words = append(words, "diff", "--no-ext-diff", "--no-textconv")
		if r.Staged {
			words = append(words, "--cached")
		}
		if r.Stat {
			words = append(words, "--stat")
		}
	case "log":
		n := r.Limit
		if n <= 0 {
			n = 20
		}
		words = append(words, "log", "-n", strconv.Itoa(n), "--format=%h %ad %an: %s", "--date=short")
	case "show":
		words = append(words, "show", "--no-ext-diff", "--no-textconv")
		if r.Stat {
			words = append(words, "--stat")
		}
	case "branch":
		words = append(words, "branch", "--list", "-vv")
	default:
		return "", fmt.Errorf("computer_git reads with status, diff, log, show or branch, not %q.", r.Op)
	}
	if r.Ref != "" {
		if r.Op == "status" || r.Op == "branch" || strings.HasPrefix(r.Ref, "-") || !refRe.MatchString(r.Ref) {
			return "", fmt.Errorf("%q is not a commit, branch or range computer_git %s takes.", r.Ref, r.Op)
		}
		words = append(words, r.Ref)
	}
	if len(r.Paths) > 0 {
		words = append(words, "--")
		words = append(words, r.Paths...)
	}
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("%q cannot be passed to git.", w)
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}
