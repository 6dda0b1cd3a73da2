package secrets

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// Git over https signs in with a secret through Ensemble's credential helper (spec 002 §8.7.5,
// credentials/git-credential.ts):
//
//	run's environment   GIT_CONFIG_COUNT/KEY_n/VALUE_n: for each allowed origin of the secrets
//	                    the run names for git, credential.<origin>.helper emptied, then the helper
//	git                 runs the helper with "get" and the credential protocol on stdin:
//	                    protocol=https, host=github.com[, path=…], a blank line
//	helper              POST /api/engine/git-credential {protocol, host, path?} on loopback, with
//	                    the run's own git token; prints username= and password=, or nothing
//	runtime             answers only while the run goes on, only for a secret the run names whose
//	                    allowed origins hold that origin; ledgers secret.use, stores nothing
//
// store and erase are ignored: the secret is kept by Ensemble, not by git.

// GitConfig is the environment that makes git use helper, and only helper, for each origin (as
// git -c on every git the run runs). Emptying the list first keeps the person's own helpers (a
// keychain) from being asked or, on store, given the secret.
func GitConfig(helper string, origins []string) map[string]string {
	if len(origins) == 0 {
		return nil
	}
	env := map[string]string{}
	n := 0
	for _, o := range origins {
		for _, v := range []string{"", helper} {
			env["GIT_CONFIG_KEY_"+strconv.Itoa(n)] = "credential." + o + ".helper"
			env["GIT_CONFIG_VALUE_"+strconv.Itoa(n)] = v
			n++
		}
	}
	env["GIT_CONFIG_COUNT"] = strconv.Itoa(n)
	return env
}

// GitOrigins are the allowed origins of secrets, once each, in order.
func GitOrigins(git []Secret) []string {
	var out []string
	for _, s := range git {
		for _, o := range s.Allow {
			if !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

// GitRequest is what git asks a credential helper (the fields Ensemble reads).
type GitRequest struct {
	Protocol string `json:"protocol"`
	Host     string `json:"host"`
	Path     string `json:"path,omitempty"`
}

// maxGitRequest bounds what a helper reads from git: a few short lines.
const maxGitRequest = 64 << 10

// ReadGitRequest reads git's credential protocol (key=value lines up to a blank line or the end).
func ReadGitRequest(r io.Reader) (GitRequest, error) {
	var q GitRequest
	sc := bufio.NewScanner(io.LimitReader(r, maxGitRequest))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return GitRequest{}, fmt.Errorf("git credential: a line without =")
		}
		switch k {
		case "protocol":
			q.Protocol = v
		case "host":
			q.Host = v
		case "path":
			q.Path = v
		}
	}
	if err := sc.Err(); err != nil {
		return GitRequest{}, fmt.Errorf("git credential: read: %w", err)
	}
	return q, nil
}

// GitAnswer is the sign-in the helper gives git.
type GitAnswer struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// WriteTo writes a in git's credential protocol.
func (a GitAnswer) WriteTo(w io.Writer) (int64, error) {
	n, err := fmt.Fprintf(w, "username=%s\npassword=%s\n", a.Username, a.Password)
	return int64(n), err
}

// origin is the request's origin as allowed origins are written; "" when it is not one.
func (q GitRequest) origin() string {
	if strings.ContainsAny(q.Host, "/@\n") || q.Host == "" {
		return ""
	}
	o, p := originProblem(q.Protocol + "://" + q.Host)
	if p != "" {
		return ""
	}
	return o
}

// GitSignIn answers git's request with the first of git (the secrets a run names for git) whose
// allowed origins hold the request's origin, and ledgers the use as by; a not-found problem when
// none does.
func (s *Store) GitSignIn(ctx context.Context, git []Secret, q GitRequest, by string) (GitAnswer, error) {
	origin := q.origin()
	for _, sc := range git {
		if origin == "" || !sc.Git || !slices.Contains(sc.Allow, origin) {
			continue
		}
		// Read again: the owner may have removed it, or stopped its git use, since the run began.
		now, err := s.List(ctx)
		if err != nil {
			return GitAnswer{}, err
		}
		i := slices.IndexFunc(now, func(x Secret) bool { return x.Name == sc.Name })
		if i < 0 || !now[i].Git || !slices.Contains(now[i].Allow, origin) {
			continue
		}
		v, err := s.Get(ctx, sc.Name)
		if err != nil {
			return GitAnswer{}, err
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return GitAnswer{}, problem.Invalid("The secret %s holds more than one line, which git cannot take as a password.", sc.Name)
		}
		if err := s.Used(ctx, Used{Name: sc.Name, Origin: origin, By: by, How: "git"}); err != nil {
			return GitAnswer{}, err
		}
		return GitAnswer{Username: cmp.Or(now[i].GitUser, DefaultGitUser), Password: v}, nil
	}
	return GitAnswer{}, problem.NotFound("No secret this run names signs git in to %s.", cmp.Or(origin, "that address"))
}

// AskGitHelper is the credential helper's "get": it reads git's request from in, asks the
// runtime at url (POST /api/engine/git-credential) with the run's token, and writes the sign-in
// to out. When the runtime has none for that host, or the run has ended, it writes nothing, so
// git goes on as it would without the helper.
func AskGitHelper(ctx context.Context, client *http.Client, url, token string, in io.Reader, out io.Writer) error {
	q, err := ReadGitRequest(in)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(q)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("git credential: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("git credential: Ensemble did not answer: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var a GitAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxGitRequest)).Decode(&a); err != nil || a.Password == "" {
		return nil
	}
	_, err = a.WriteTo(out)
	return err
}
