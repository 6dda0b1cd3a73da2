// Package keys makes, checks, lists and revokes the ens_ keys editors and agents use to reach the
// context bridge. A key is shown once when it is made; the database keeps only its SHA-256.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/bridge/keyform"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Secret is a key's value. It never prints itself: String, Format, MarshalJSON and LogValue redact
// it; Reveal is the one way to the value.
type Secret struct{ v string }

// Reveal returns the key, to show once or send as a bearer token.
func (s Secret) Reveal() string { return s.v }

func (s Secret) String() string                { return "bridge-key:[redacted]" }
func (s Secret) Format(f fmt.State, verb rune) { fmt.Fprint(f, s.String()) }
func (s Secret) MarshalJSON() ([]byte, error)  { return []byte(`"[redacted]"`), nil }
func (s Secret) LogValue() slog.Value          { return slog.StringValue(s.String()) }
func (s Secret) GoString() string              { return s.String() }

// Key is a key's details, never its value.
type Key struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Hint       string     `json:"hint"` // its last four characters
	CanWrite   bool       `json:"canWrite"`
	CanUseApps bool       `json:"canUseApps"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
}

// Grants are what a new key may do besides reading.
type Grants struct {
	CanWrite   bool `json:"canWrite"`
	CanUseApps bool `json:"canUseApps"`
}

// Store keeps keys.
type Store struct {
	db  *sql.DB
	w   *ledger.Writer
	now func() time.Time
}

// New returns a Store over st, writing through w.
func New(st *store.Store, w *ledger.Writer) *Store {
	return &Store{db: st.Reader(), w: w, now: time.Now}
}

// Errors a person acts on.
var (
	ErrUnknown = errors.New("That key is not one this Ensemble made; make one with `ensemble keys create NAME`.")
	ErrRevoked = errors.New("That key was revoked; make a new one with `ensemble keys create NAME`.")
)

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Create makes a key and returns it with its value, which is never available again.
func (s *Store) Create(ctx context.Context, name string, g Grants) (Key, Secret, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 80 || !utf8.ValidString(name) {
		return Key{}, Secret{}, problem.Invalid("A key needs a name of 1 to 80 characters, like “laptop editor”.")
	}
	b := make([]byte, 32)
	rand.Read(b)
	secret := keyform.Prefix + base64.RawURLEncoding.EncodeToString(b)
	k := Key{ID: ledger.NewID("key_"), Name: name, Hint: secret[len(secret)-4:], CanWrite: g.CanWrite,
		CanUseApps: g.CanUseApps, CreatedAt: s.now().UTC()}
	err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		_, err := t.ExecContext(ctx, `INSERT INTO bridge_keys (id, name, hash, hint, can_write, can_use_apps, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, k.ID, k.Name, hash(secret), k.Hint, k.CanWrite, k.CanUseApps, store.Stamp(k.CreatedAt))
		if err != nil {
			return fmt.Errorf("keys: create: %w", err)
		}
		return t.Emit(KindCreated, k.ID, k)
	})
	if err != nil {
		return Key{}, Secret{}, err
	}
	return k, Secret{secret}, nil
}

const columns = "id, name, hint, can_write, can_use_apps, created_at, last_used_at, revoked_at"

func scan(row interface{ Scan(...any) error }) (Key, error) {
	var k Key
	var created string
	var used, revoked sql.NullString
	if err := row.Scan(&k.ID, &k.Name, &k.Hint, &k.CanWrite, &k.CanUseApps, &created, &used, &revoked); err != nil {
		return k, err
	}
	k.CreatedAt, _ = store.ParseTime(created)
	if used.Valid {
		t, _ := store.ParseTime(used.String)
		k.LastUsedAt = &t
	}
	if revoked.Valid {
		t, _ := store.ParseTime(revoked.String)
		k.RevokedAt = &t
	}
	return k, nil
}

// List returns every key, newest first, revoked ones too.
func (s *Store) List(ctx context.Context) ([]Key, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+columns+" FROM bridge_keys ORDER BY created_at DESC")
	if err != nil {
		return nil, fmt.Errorf("keys: list: %w", err)
	}
	defer rows.Close()
	out := []Key{}
	for rows.Next() {
		k, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("keys: list: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// Revoke ends a key at once; revoking it again changes nothing.
func (s *Store) Revoke(ctx context.Context, id string) (Key, error) {
	var k Key
	err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		var err error
		k, err = scan(t.QueryRowContext(ctx, "SELECT "+columns+" FROM bridge_keys WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return problem.NotFound("There is no key with id %q.", id)
		}
		if err != nil || k.RevokedAt != nil {
			return err
		}
		now := s.now().UTC()
		if _, err := t.ExecContext(ctx, "UPDATE bridge_keys SET revoked_at = ? WHERE id = ?", store.Stamp(now), id); err != nil {
			return fmt.Errorf("keys: revoke: %w", err)
		}
		k.RevokedAt = &now
		return t.Emit(KindRevoked, k.ID, k)
	})
	return k, err
}

// Check finds the key a request presents. A key that is unknown or revoked is refused with
// ErrUnknown or ErrRevoked. It notes when the key was last used, at most once a minute.
func (s *Store) Check(ctx context.Context, secret string) (Key, error) {
	if !keyform.Looks(secret) {
		return Key{}, ErrUnknown
	}
	k, err := scan(s.db.QueryRowContext(ctx, "SELECT "+columns+" FROM bridge_keys WHERE hash = ?", hash(secret)))
	if errors.Is(err, sql.ErrNoRows) {
		return Key{}, ErrUnknown
	}
	if err != nil {
		return Key{}, fmt.Errorf("keys: check: %w", err)
	}
	if k.RevokedAt != nil {
		return Key{}, ErrRevoked
	}
	now := s.now()
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) > time.Minute {
		s.w.Exec(ctx, func(t *ledger.Tx) error {
			_, err := t.ExecContext(ctx, "UPDATE bridge_keys SET last_used_at = ? WHERE id = ?", store.Stamp(now), k.ID)
			return err
		})
	}
	return k, nil
}

// Actor is who a key's writes are recorded as.
func (k Key) Actor() ledger.Actor {
	return ledger.Actor{Kind: ledger.BridgeKey, ID: k.ID, Name: k.Name}
}
