package jobs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ensemblework/ensemble/runtime/loopback"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// FileChange is a file a run changed, with its line counts (git's numstat; -1 for a binary file).
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// maxChanges caps the files listed for one run.
const maxChanges = 500

// git runs git in dir with a clean environment for scripts: no prompts, no pager, no hooks.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	return cmd.Output()
}

// headCommit is the commit checked out in dir, "" when dir is not a git repository (or has none).
func headCommit(ctx context.Context, dir string) string {
	out, err := git(ctx, dir, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// changedFiles lists what changed in dir since base: committed and uncommitted changes to tracked
// files, and new untracked files (all their lines added). Outside a git repository it lists nothing.
func changedFiles(ctx context.Context, dir, base string) []FileChange {
	if base == "" {
		return []FileChange{}
	}
	out := []FileChange{}
	if diff, err := git(ctx, dir, "diff", "--numstat", "--no-renames", base); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(diff))
		for sc.Scan() && len(out) < maxChanges {
			f := strings.SplitN(sc.Text(), "\t", 3)
			if len(f) != 3 {
				continue
			}
			out = append(out, FileChange{Path: f[2], Added: numstat(f[0]), Removed: numstat(f[1])})
		}
	}
	if untracked, err := git(ctx, dir, "ls-files", "--others", "--exclude-standard", "-z"); err == nil {
		for _, p := range strings.Split(string(untracked), "\x00") {
			if p == "" || len(out) >= maxChanges {
				continue
			}
			out = append(out, FileChange{Path: p, Added: lines(filepath.Join(dir, p))})
		}
	}
	return out
}

// treeState is the state of each file that differed from base in dir: its content's hash, "-"
// for a file that is gone. A run lists only what changed after it, not the person's own edits
// still uncommitted in the folder when it began.
func treeState(ctx context.Context, dir, base string) map[string]string {
	if base == "" {
		return nil
	}
	st := map[string]string{}
	for _, f := range changedFiles(ctx, dir, base) {
		st[f.Path] = fileState(filepath.Join(dir, f.Path))
	}
	return st
}

// fileState is a file's content hash (a link's target), or "-" when it is not there.
func fileState(path string) string {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return "-"
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return "link:" + target
	case !fi.Mode().IsRegular():
		return "other"
	}
	f, err := os.Open(path)
	if err != nil {
		return "-"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// runChanges is what changed in dir since base that the run changed: a file as it was when the
// run began (before, from [treeState]) is left out, and one the person had changed that the run
// put back as it is at base is listed. With no before, all that changed since base.
func runChanges(ctx context.Context, dir, base string, before map[string]string) []FileChange {
	all := changedFiles(ctx, dir, base)
	if before == nil {
		return all
	}
	out := []FileChange{}
	listed := map[string]bool{}
	for _, f := range all {
		listed[f.Path] = true
		if h, ok := before[f.Path]; ok && h == fileState(filepath.Join(dir, f.Path)) {
			continue
		}
		out = append(out, f)
	}
	var back []string
	for p := range before {
		if !listed[p] {
			back = append(back, p)
		}
	}
	sort.Strings(back)
	for _, p := range back {
		if len(out) < maxChanges {
			out = append(out, FileChange{Path: p})
		}
	}
	return out
}

func numstat(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1 // "-": a binary file
	}
	return n
}

// lines counts the lines of a new file, -1 for a binary one; a link is not followed.
func lines(path string) int {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 50<<20 {
		return 0
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return -1
	}
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// checkCloneURL allows a public https repository URL without a user name, query or port, and, for
// repositories served on this computer, http or https to loopback. No other scheme: no file://,
// ssh or git protocol, which could reach what the run should not.
func checkCloneURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return problem.Invalid("%q is not a repository URL; give an https URL such as https://github.com/owner/repo.", raw)
	}
	loop := loopback.Host(u.Host)
	switch {
	case u.User != nil:
		return problem.Invalid("A repository URL must not carry a user name or password; Ensemble clones public repositories.")
	case u.RawQuery != "" || u.Fragment != "":
		return problem.Invalid("A repository URL must not have a query or fragment.")
	case u.Scheme == "https" && (u.Port() == "" || loop):
	case u.Scheme == "http" && loop:
	default:
		return problem.Invalid("Ensemble clones only https repository URLs (without a port); %q is not one.", raw)
	}
	return nil
}

// cloneInto clones url into dir, shallow, without hooks or templates and without asking for a
// password.
func cloneInto(ctx context.Context, url, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	clone := func(extra ...string) ([]byte, error) {
		args := append([]string{"-c", "core.hooksPath=/dev/null", "clone", "--quiet", "--template=", "--no-recurse-submodules"}, extra...)
		cmd := exec.CommandContext(ctx, "git", append(args, "--", url, dir)...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false", "GIT_PROTOCOL_FROM_USER=0")
		return cmd.CombinedOutput()
	}
	out, err := clone("--depth", "1")
	if err != nil && bytes.Contains(out, []byte("shallow")) {
		// A server that cannot serve a shallow clone (git's dumb HTTP) gets a whole one.
		os.RemoveAll(dir)
		out, err = clone()
	}
	if err != nil {
		return fmt.Errorf("Could not clone %s: %s.", url, strings.TrimSpace(Redact(string(out))))
	}
	return nil
}
