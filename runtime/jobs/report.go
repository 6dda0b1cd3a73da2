package jobs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Report is what an agent reports of its own work through report_result, apart from its closing
// words: how it went, the checks it ran, and what it produced.
type Report struct {
	Outcome   string   `json:"outcome" jsonschema:"done, pass, fail or blocked"`
	Summary   string   `json:"summary" jsonschema:"what was done, for the person, in a few sentences"`
	Checks    []Check  `json:"checks,omitempty" jsonschema:"the checks that were run, each with its verdict"`
	Subject   *Subject `json:"subject,omitempty" jsonschema:"the commit or content the work produced"`
	Evidence  []string `json:"evidence,omitempty" jsonschema:"ids from attach_evidence"`
	BlockedBy string   `json:"blockedBy,omitempty" jsonschema:"with outcome blocked: what stands in the way"`
}

// Check is one check in a report.
type Check struct {
	Name     string   `json:"name"`
	Verdict  string   `json:"verdict" jsonschema:"pass, fail or skip"`
	Note     string   `json:"note,omitempty"`
	Evidence []string `json:"evidence,omitempty" jsonschema:"ids from attach_evidence"`
}

// Subject is what the work produced: a commit in the run folder's repository, or the hash of a
// tree (the last commit's or the working tree's).
type Subject struct {
	Commit      string `json:"commit,omitempty"`
	ContentHash string `json:"contentHash,omitempty"`
}

var (
	outcomes = []string{"done", "pass", "fail", "blocked"}
	verdicts = []string{"pass", "fail", "skip"}
)

// check refuses a report whose shape is wrong, with the sentence the agent is told so that it can
// fix the report and send it again. evidence says whether an evidence id belongs to the run.
func (rep *Report) check(evidence func(id string) bool) error {
	switch {
	case !oneOf(rep.Outcome, outcomes):
		return fmt.Errorf("outcome %q is not one of done, pass, fail or blocked", rep.Outcome)
	case strings.TrimSpace(rep.Summary) == "":
		return fmt.Errorf("the summary is empty; say what was done")
	case utf8.RuneCountInString(rep.Summary) > previewSummary:
		return fmt.Errorf("the summary is longer than %d characters", previewSummary)
	case len(rep.Checks) > 100:
		return fmt.Errorf("a report has at most 100 checks")
	case rep.Outcome == "blocked" && strings.TrimSpace(rep.BlockedBy) == "":
		return fmt.Errorf("a blocked report says what blocks it (blockedBy)")
	}
	ids := append([]string(nil), rep.Evidence...)
	for i, c := range rep.Checks {
		if strings.TrimSpace(c.Name) == "" {
			return fmt.Errorf("check %d has no name", i+1)
		}
		if !oneOf(c.Verdict, verdicts) {
			return fmt.Errorf("check %q: verdict %q is not one of pass, fail or skip", c.Name, c.Verdict)
		}
		ids = append(ids, c.Evidence...)
	}
	for _, id := range ids {
		if !evidence(id) {
			return fmt.Errorf("there is no evidence %q in this run; attach the file with attach_evidence and use the id it answers", id)
		}
	}
	return nil
}

// checkSubject checks that the candidate the report names exists in the run folder's repository.
func checkSubject(ctx context.Context, dir string, s *Subject) error {
	if s == nil || s.Commit == "" && s.ContentHash == "" {
		return nil
	}
	git := func(env []string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if s.Commit != "" {
		if !hexLike(s.Commit) {
			return fmt.Errorf("subject.commit %q is not a commit hash", s.Commit)
		}
		if _, err := git(nil, "cat-file", "-e", s.Commit+"^{commit}"); err != nil {
			return fmt.Errorf("the commit %s is not in the run folder's repository", s.Commit)
		}
	}
	if s.ContentHash == "" {
		return nil
	}
	if !hexLike(s.ContentHash) {
		return fmt.Errorf("subject.contentHash %q is not a tree hash", s.ContentHash)
	}
	if head, err := git(nil, "rev-parse", "HEAD^{tree}"); err == nil && head == s.ContentHash {
		return nil
	}
	// The working tree's hash, through a throwaway index so the agent's own staging is untouched.
	tmp, err := os.MkdirTemp("", "ensemble-index-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := git(env, "add", "-A"); err != nil {
		return fmt.Errorf("the run folder is not a git repository, so subject.contentHash cannot be checked")
	}
	if tree, err := git(env, "write-tree"); err != nil || tree != s.ContentHash {
		return fmt.Errorf("subject.contentHash %s is neither the last commit's tree nor the working tree's", s.ContentHash)
	}
	return nil
}

func hexLike(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}
