package secrets

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// Use is how runs may use a run secret besides secret_http (spec 002 §8.7.5).
type Use struct {
	// Env puts the secret in the environment of the runs that may have it, as $NAME, where any
	// program the agent runs can read it.
	Env bool `json:"env"`
	// Git makes git over https to the secret's allowed origins sign in with it, in the runs that
	// name it (Ensemble's credential helper; see [GitConfig]).
	Git bool `json:"git"`
	// GitUser is the user name git is given with it; "" is [DefaultGitUser].
	GitUser string `json:"gitUser,omitempty"`
}

// DefaultGitUser is the user name git signs in with when a secret names none: GitHub takes any
// token with it, and GitLab and Gitea take any user name with a token.
const DefaultGitUser = "x-access-token"

// gitHosts are the origins a secret is used for git by default: the git hosts people mean when
// they save a token for one. Any other origin is used for git only when its owner says so.
var gitHosts = []string{"https://github.com", "https://gitlab.com", "https://bitbucket.org", "https://codeberg.org"}

// DefaultUse is how a secret allowed to go to allow (clean origins) is used when it is saved: one
// with no destination is an environment secret, one with destinations is used by reference
// only, and for git when one of them is a well-known git host.
func DefaultUse(allow []string) Use {
	u := Use{Env: len(allow) == 0}
	for _, o := range allow {
		if slices.Contains(gitHosts, o) {
			u.Git = true
		}
	}
	return u
}

// UseChange changes a run secret's allowed destinations and how runs use it; nil fields stay.
type UseChange struct {
	Allow   *[]string `json:"allow,omitempty"`
	Env     *bool     `json:"env,omitempty"`
	Git     *bool     `json:"git,omitempty"`
	GitUser *string   `json:"gitUser,omitempty"`
}

// cleanAllow checks and normalises allowed destinations, keeping their order, once each.
func cleanAllow(allow []string) ([]string, error) {
	if len(allow) > maxAllow {
		return nil, problem.Invalid("A secret may be sent to at most %d origins.", maxAllow)
	}
	clean := []string{}
	for _, o := range allow {
		c, p := originProblem(strings.TrimSpace(o))
		if p != "" {
			return nil, problem.New(problem.KindInvalid, p)
		}
		if !slices.Contains(clean, c) {
			clean = append(clean, c)
		}
	}
	return clean, nil
}

// gitUserProblem says in one sentence why u cannot be git's user name, or "".
func gitUserProblem(u string) string {
	if len(u) > 100 || strings.ContainsAny(u, "\x00\n\r=") {
		return "A git user name is one line of at most 100 characters, without =."
	}
	return ""
}

// SetUse changes where a run secret may be sent and how runs use it, leaving its value as it is.
// A secret used for git needs an allowed origin, the host git signs in to.
func (s *Store) SetUse(ctx context.Context, name string, ch UseChange) (Secret, error) {
	var clean []string
	if ch.Allow != nil {
		var err error
		if clean, err = cleanAllow(*ch.Allow); err != nil {
			return Secret{}, err
		}
	}
	if ch.GitUser != nil {
		if p := gitUserProblem(strings.TrimSpace(*ch.GitUser)); p != "" {
			return Secret{}, problem.New(problem.KindInvalid, p)
		}
	}
	err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		var (
			raw string
			u   Use
		)
		err := t.QueryRowContext(ctx, "SELECT allow, env, git, git_user FROM secrets WHERE name = ? AND kind = 'run'", name).
			Scan(&raw, &u.Env, &u.Git, &u.GitUser)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(name)
		}
		if err != nil {
			return fmt.Errorf("secrets: set use: %w", err)
		}
		allow := []string{}
		json.Unmarshal([]byte(raw), &allow)
		if ch.Allow != nil {
			allow = clean
		}
		if ch.Env != nil {
			u.Env = *ch.Env
		}
		if ch.Git != nil {
			u.Git = *ch.Git
		}
		if ch.GitUser != nil {
			u.GitUser = strings.TrimSpace(*ch.GitUser)
		}
		if u.Git && len(allow) == 0 {
			return problem.Invalid("Git signs in with %s only to its allowed origins; allow one first with `ensemble secrets allow %s https://github.com`.", name, name)
		}
		allowJSON, _ := json.Marshal(allow)
		if _, err := t.ExecContext(ctx, "UPDATE secrets SET allow = ?, env = ?, git = ?, git_user = ? WHERE name = ?",
			string(allowJSON), u.Env, u.Git, u.GitUser, name); err != nil {
			return fmt.Errorf("secrets: set use: %w", err)
		}
		return t.Emit(KindSaved, name, Saved{Name: name, Kind: Run, Allow: allow, Env: u.Env, Git: u.Git})
	})
	if err != nil {
		return Secret{}, err
	}
	list, err := s.List(ctx)
	if err != nil {
		return Secret{}, err
	}
	for _, sc := range list {
		if sc.Name == name {
			return sc, nil
		}
	}
	return Secret{}, notFound(name)
}

// Mode is how this computer chooses the secrets of a run that names none (spec 002 §8.7.5,
// credentials/mode.ts).
type Mode string

const (
	// ModeAll gives such a run every environment secret: compatibility, and the default.
	ModeAll Mode = "all"
	// ModeNamed gives it only the names in [RunSettings.Names], none when there are none.
	ModeNamed Mode = "named"
)

// RunSettings are the computer's choice of the secrets a run that names none gets.
type RunSettings struct {
	Mode  Mode     `json:"mode"`
	Names []string `json:"names"` // with ModeNamed: the secrets every such run names
}

// namesProblem checks a list of secret names a run or the computer names, deduplicated.
func namesProblem(names []string) ([]string, string) {
	if len(names) > MaxRunSecrets {
		return nil, fmt.Sprintf("A run names at most %d secrets.", MaxRunSecrets)
	}
	out := []string{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if p := NameProblem(Run, n); p != "" {
			return nil, p
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, ""
}

// CleanNames checks the secret names a run names and returns them once each, in order; its error
// is a sentence for the person.
func CleanNames(names []string) ([]string, error) {
	out, p := namesProblem(names)
	if p != "" {
		return nil, problem.New(problem.KindInvalid, p)
	}
	return out, nil
}

// RunSettings are the computer's settings for runs' secrets; mode all and no names until changed.
func (s *Store) RunSettings(ctx context.Context) (RunSettings, error) {
	var mode, raw string
	err := s.db.QueryRowContext(ctx, "SELECT mode, names FROM secret_settings WHERE id = 1").Scan(&mode, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return RunSettings{Mode: ModeAll, Names: []string{}}, nil
	}
	if err != nil {
		return RunSettings{}, fmt.Errorf("secrets: run settings: %w", err)
	}
	rs := RunSettings{Mode: Mode(mode), Names: []string{}}
	json.Unmarshal([]byte(raw), &rs.Names)
	return rs, nil
}

// SetRunSettings keeps the computer's settings for runs' secrets. Names go with mode named only:
// mode all already gives every environment secret.
func (s *Store) SetRunSettings(ctx context.Context, rs RunSettings) (RunSettings, error) {
	switch rs.Mode {
	case ModeAll, ModeNamed:
	default:
		return RunSettings{}, problem.Invalid("The mode is all or named, not %q.", clip(string(rs.Mode)))
	}
	names, p := namesProblem(rs.Names)
	if p != "" {
		return RunSettings{}, problem.New(problem.KindInvalid, p)
	}
	if rs.Mode == ModeAll && len(names) > 0 {
		return RunSettings{}, problem.Invalid("Mode all already gives every run each environment secret; name secrets with mode named.")
	}
	rs.Names = names
	raw, _ := json.Marshal(names)
	err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		if _, err := t.ExecContext(ctx, `INSERT INTO secret_settings (id, mode, names) VALUES (1, ?, ?)
			ON CONFLICT (id) DO UPDATE SET mode = excluded.mode, names = excluded.names`, string(rs.Mode), string(raw)); err != nil {
			return fmt.Errorf("secrets: set run settings: %w", err)
		}
		return t.Emit(KindRuns, "runs", rs)
	})
	if err != nil {
		return RunSettings{}, err
	}
	return rs, nil
}

// Used ledgers one use of a secret by what Ensemble did with it (a git sign-in), never the value.
func (s *Store) Used(ctx context.Context, u Used) error {
	return s.w.Exec(ctx, func(t *ledger.Tx) error { return t.Emit(KindUsed, u.Name, u) })
}
