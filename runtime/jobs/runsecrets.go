package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

// A run's secrets (spec 002 §8.7.5): the saved secrets its scope gives it ([secrets.ScopeFor])
// go in its agent's environment as $NAME (engines.Spec.CommandEnv, so they reach the commands
// the agent runs), and git over https to the allowed origins of the secrets it names for git
// signs in through Ensemble's credential helper, which asks [Service.GitCredential] with a token
// made for the run. The token is held in memory only and dropped when the run ends, so the helper
// answers nothing after. Values are hidden in everything the run records (Options.Hide knows
// every saved value), and never logged.

// RunSecrets are the saved secrets runs may use (runtime/secrets' Store).
type RunSecrets interface {
	ForRun(ctx context.Context, names []string) (secrets.Grant, error)
	GitSignIn(ctx context.Context, git []secrets.Secret, q secrets.GitRequest, by string) (secrets.GitAnswer, error)
}

// ErrNoRunToken is a git credential request without the token of a run that is going.
var ErrNoRunToken = errors.New("This is Ensemble's git credential helper; it answers only a run it was given to, while it runs.")

// namesJSON is a run's secret names as job_settings keeps them.
func namesJSON(names []string) string {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// secretsEnv is what the run's agent gets of the saved secrets: the environment secrets and git's
// settings, and what the brief should tell the agent of them. It also makes the run's git token.
func (r *run) secretsEnv() (map[string]string, string, error) {
	if r.s.opts.Secrets == nil {
		return nil, "", nil
	}
	if r.job.Settings.SecretsNamed && len(r.job.Settings.Secrets) == 0 {
		return nil, "", nil // a node's run carries no secret unless it names one
	}
	g, err := r.s.opts.Secrets.ForRun(r.ctx, r.job.Settings.Secrets)
	if err != nil {
		return nil, "", err
	}
	if len(g.Missing) > 0 {
		r.rec.add(KindNote, Trace{Text: "Not on this computer, so the run goes without: " + strings.Join(g.Missing, ", ") +
			". Save one with `ensemble secrets set NAME`."}, nil)
	}
	env := maps.Clone(g.Values)
	var note []string
	if len(g.Env) > 0 {
		vars := make([]string, len(g.Env))
		for i, n := range g.Env {
			vars[i] = "$" + n
		}
		note = append(note, "Your environment has the person's saved secrets "+strings.Join(vars, ", ")+
			". Use them where a command needs them; never print, echo or write a value anywhere.")
		r.rec.add(KindNote, Trace{Text: "Secrets in the agent's environment: " + strings.Join(g.Env, ", ") + "."}, nil)
	}
	origins := secrets.GitOrigins(g.Git)
	if len(origins) > 0 && r.s.opts.GitHelper != nil {
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, secrets.GitConfig(r.s.opts.GitHelper(r.s.newGitToken(r)), origins))
		r.mu.Lock()
		r.git = slices.Clone(g.Git)
		r.mu.Unlock()
		note = append(note, "git over https to "+strings.Join(origins, ", ")+" signs in by itself; do not ask for a token.")
		names := make([]string, len(g.Git))
		for i, s := range g.Git {
			names[i] = s.Name
		}
		r.rec.add(KindNote, Trace{Text: "git signs in to " + strings.Join(origins, ", ") + " with " + strings.Join(names, ", ") + "."}, nil)
	}
	if len(note) == 0 {
		return env, "", nil
	}
	return env, "\n\n" + strings.Join(note, " "), nil
}

// newGitToken makes the token a run's credential helper asks with, and remembers it.
func (s *Service) newGitToken(r *run) string { return s.newToken(r, "ens_git_", s.gitKeys) }

// GitTokenLive reports whether token is the git token of a run that is going.
func (s *Service) GitTokenLive(token string) bool {
	s.mu.Lock()
	r := s.gitKeys[hashSecret(token)]
	s.mu.Unlock()
	return token != "" && r != nil && r.ctx.Err() == nil
}

// GitCredential answers git's request from the credential helper of the run whose token it
// carries: the sign-in of a secret the run names for git whose allowed origins hold the request's
// origin. [ErrNoRunToken] when the token is no going run's; a not-found problem when no secret
// fits. The value goes only to the helper; the run's trace notes the use without it.
func (s *Service) GitCredential(ctx context.Context, token string, q secrets.GitRequest) (secrets.GitAnswer, error) {
	s.mu.Lock()
	r := s.gitKeys[hashSecret(token)]
	s.mu.Unlock()
	if token == "" || r == nil || r.ctx.Err() != nil || s.opts.Secrets == nil {
		return secrets.GitAnswer{}, ErrNoRunToken
	}
	r.mu.Lock()
	git := r.git
	r.mu.Unlock()
	a, err := s.opts.Secrets.GitSignIn(ctx, git, q, "run "+r.job.ID)
	if err != nil {
		return secrets.GitAnswer{}, err
	}
	r.rec.add(KindNote, Trace{Text: "git signed in to " + q.Protocol + "://" + q.Host + " with a saved secret."}, nil)
	return a, nil
}
