// Package secrets keeps secrets on this computer, encrypted: the model providers' keys and the
// secrets runs use. Values are sealed with the runtime's local key (secret.key in the data folder)
// before they reach SQLite; only names, kinds and allowed origins are ever listed. A [Redactor]
// knows every value, so logs and traces can hide them. The seal key (seal-key.json) lets a browser
// encrypt a value for this computer alone (see [Box]).
//
// No value is ever logged, put in an error or in an event.
package secrets

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Limits on what the store keeps (spec 002 §8.7.4).
const (
	MaxValue      = 16 << 10 // bytes in one value
	MaxRunSecrets = 100
	maxAllow      = 20
)

// Secret is a secret's details, never its value.
type Secret struct {
	Name  string   `json:"name"`
	Kind  Kind     `json:"kind"`
	Allow []string `json:"allow"`
	Use
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Options configure a Store.
type Options struct {
	// DataDir holds secret.key and seal-key.json.
	DataDir string
	Store   *store.Store
	Writer  *ledger.Writer
	// Passphrase gives the local key's passphrase, asked only when it has one; nil refuses a
	// locked key with ErrLocked.
	Passphrase func() (string, error)
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Store keeps secrets.
type Store struct {
	db   *sql.DB
	w    *ledger.Writer
	key  *localKey
	seal *sealKey
	hide *Redactor
	now  func() time.Time
}

// notFound says there is no secret with that name.
func notFound(name string) error {
	return problem.NotFound("There is no secret named %s; `ensemble secrets list` shows them.", clip(name))
}

// New opens the secrets kept in st, making secret.key and seal-key.json in opts.DataDir on first
// use, and loads every value into the Redactor before anything else can log.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	k, err := loadLocalKey(opts.DataDir, opts.Passphrase)
	if err != nil {
		return nil, err
	}
	sk, err := loadSealKey(opts.DataDir, k, opts.Now)
	if err != nil {
		return nil, err
	}
	s := &Store{db: opts.Store.Reader(), w: opts.Writer, key: k, seal: sk, hide: NewRedactor(), now: opts.Now}
	if err := s.loadAll(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Redactor hides every value this store knows; it follows Set and Remove.
func (s *Store) Redactor() *Redactor { return s.hide }

// loadAll opens every value, for the Redactor.
func (s *Store) loadAll(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "SELECT name, ciphertext FROM secrets")
	if err != nil {
		return fmt.Errorf("secrets: load: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var ct []byte
		if err := rows.Scan(&name, &ct); err != nil {
			return fmt.Errorf("secrets: load: %w", err)
		}
		v, err := s.key.open(ct, rowContext(name))
		if err != nil {
			return fmt.Errorf("secrets: load %s: %w", name, err)
		}
		s.hide.set(name, string(v))
	}
	return rows.Err()
}

// rowContext binds a ciphertext to its row's name.
func rowContext(name string) string { return "ensemble-secret-v1\x00" + name }

// ValueProblem says in one sentence why value cannot be kept, or "" when it can.
func ValueProblem(value string) string {
	switch {
	case value == "":
		return "The value is empty; type or paste the secret itself."
	case len(value) > MaxValue:
		return fmt.Sprintf("The value is longer than %d KB.", MaxValue>>10)
	case !utf8.ValidString(value):
		return "The value is not text (UTF-8)."
	}
	for _, r := range value {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return "The value holds a control character; paste only the secret itself."
		}
	}
	return ""
}

// originProblem checks one allowed destination: an origin (scheme, host and port only), https, or
// http to this computer itself (spec 002 §8.7.5).
func originProblem(o string) (string, string) {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Sprintf("%q is not an origin; write it as https://host (like https://api.stripe.com).", clip(o))
	}
	host := u.Hostname()
	local := host == "localhost" || host == "127.0.0.1" || host == "::1"
	if u.Scheme != "https" && !(u.Scheme == "http" && local) {
		return "", fmt.Sprintf("%q must be https (http only to this computer itself).", clip(o))
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), ""
}

// Set keeps value under name, replacing what was there. allow is where a run secret may be sent
// (origins); a provider key has none. How runs use it starts from what allow makes it ([DefaultUse]):
// a secret with no destination goes in a run's environment, one allowed for a git host signs git in
// there; [Store.SetUse] changes that afterwards.
func (s *Store) Set(ctx context.Context, name string, kind Kind, value string, allow []string) error {
	if p := NameProblem(kind, name); p != "" {
		return problem.New(problem.KindInvalid, p)
	}
	if p := ValueProblem(value); p != "" {
		return problem.New(problem.KindInvalid, p)
	}
	if kind == Provider && len(allow) > 0 {
		return problem.Invalid("A provider key is used only by Ensemble's own model calls; it takes no allowed destinations.")
	}
	clean, err := cleanAllow(allow)
	if err != nil {
		return err
	}
	allowJSON, _ := json.Marshal(clean)
	use := Use{}
	if kind == Run {
		use = DefaultUse(clean)
	}
	ct := s.key.seal([]byte(value), rowContext(name))
	err = s.w.Exec(ctx, func(t *ledger.Tx) error {
		var old string
		err := t.QueryRowContext(ctx, "SELECT kind FROM secrets WHERE name = ?", name).Scan(&old)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if kind == Run {
				var n int
				if err := t.QueryRowContext(ctx, "SELECT count(*) FROM secrets WHERE kind = 'run'").Scan(&n); err != nil {
					return fmt.Errorf("secrets: set: %w", err)
				}
				if n >= MaxRunSecrets {
					return problem.Invalid("This computer keeps at most %d run secrets; remove one with `ensemble secrets remove NAME`.", MaxRunSecrets)
				}
			}
		case err != nil:
			return fmt.Errorf("secrets: set: %w", err)
		case Kind(old) != kind:
			return problem.Invalid("%s is already a %s secret.", name, old)
		}
		at := store.Stamp(t.Now())
		// The user name git is given stays: a new value is most often the same token, renewed.
		if _, err := t.ExecContext(ctx, `INSERT INTO secrets (name, kind, ciphertext, allow, env, git, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET ciphertext = excluded.ciphertext, allow = excluded.allow,
				env = excluded.env, git = excluded.git, updated_at = excluded.updated_at`,
			name, string(kind), ct, string(allowJSON), use.Env, use.Git, at, at); err != nil {
			return fmt.Errorf("secrets: set: %w", err)
		}
		return t.Emit(KindSaved, name, Saved{Name: name, Kind: kind, Allow: clean, Env: use.Env, Git: use.Git})
	})
	if err != nil {
		return err
	}
	s.hide.set(name, value)
	return nil
}

// Get returns name's value; a not-found problem when there is none.
func (s *Store) Get(ctx context.Context, name string) (string, error) {
	var ct []byte
	err := s.db.QueryRowContext(ctx, "SELECT ciphertext FROM secrets WHERE name = ?", name).Scan(&ct)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound(name)
	}
	if err != nil {
		return "", fmt.Errorf("secrets: get: %w", err)
	}
	v, err := s.key.open(ct, rowContext(name))
	if err != nil {
		return "", fmt.Errorf("secrets: get %s: %w", name, err)
	}
	return string(v), nil
}

// Remove forgets name; a not-found problem when there is none.
func (s *Store) Remove(ctx context.Context, name string) error {
	err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		res, err := t.ExecContext(ctx, "DELETE FROM secrets WHERE name = ?", name)
		if err != nil {
			return fmt.Errorf("secrets: remove: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound(name)
		}
		return t.Emit(KindRemoved, name, Removed{Name: name})
	})
	if err != nil {
		return err
	}
	// The value stays hidden in what was already written; from now on nothing new can hold it.
	s.hide.set(name, "")
	return nil
}

// List returns every secret's details, by name; never a value.
func (s *Store) List(ctx context.Context) ([]Secret, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT name, kind, allow, env, git, git_user, created_at, updated_at FROM secrets ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("secrets: list: %w", err)
	}
	defer rows.Close()
	out := []Secret{}
	for rows.Next() {
		var sc Secret
		var allow, created, updated string
		if err := rows.Scan(&sc.Name, &sc.Kind, &allow, &sc.Env, &sc.Git, &sc.GitUser, &created, &updated); err != nil {
			return nil, fmt.Errorf("secrets: list: %w", err)
		}
		sc.Allow = []string{}
		json.Unmarshal([]byte(allow), &sc.Allow)
		sc.CreatedAt, _ = store.ParseTime(created)
		sc.UpdatedAt, _ = store.ParseTime(updated)
		out = append(out, sc)
	}
	return out, rows.Err()
}

// ProviderKey returns the saved key of a model provider ("anthropic", "openai") and whether there
// is one.
func (s *Store) ProviderKey(ctx context.Context, provider string) (string, bool, error) {
	v, err := s.Get(ctx, ProviderName(provider))
	if problem.Is(err, problem.KindNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}
