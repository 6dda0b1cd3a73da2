package profiles

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Options configure a Service.
type Options struct {
	Store  *store.Store
	Writer *ledger.Writer // the runtime's one writer
	// KnownAgent says, as a sentence, that there is no agent by a name (jobs.Service.KnownAgent);
	// an agent that is there but signed out is allowed, as assigning checks it. Nil allows any name.
	KnownAgent func(agent string) error
}

// Service keeps the run profiles.
type Service struct{ opts Options }

// New returns a Service.
func New(opts Options) *Service { return &Service{opts: opts} }

// Input is a profile to save. On an update, fields left out (nil) keep their value; Settings,
// when given, replaces the profile's settings whole. An empty Folder means none.
type Input struct {
	Name     *string             `json:"name,omitempty"`
	Agent    *string             `json:"agent,omitempty"`
	Folder   *string             `json:"folder,omitempty"`
	Settings *jobs.SettingsInput `json:"settings,omitempty"`
}

// List is every profile, the starred one first, then by name.
func (s *Service) List(ctx context.Context) ([]Profile, error) {
	rows, err := s.opts.Store.Reader().QueryContext(ctx, "SELECT "+columns+" FROM run_profiles ORDER BY starred DESC, name_key, id")
	if err != nil {
		return nil, fmt.Errorf("profiles: list: %w", err)
	}
	defer rows.Close()
	out := []Profile{}
	for rows.Next() {
		p, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("profiles: list: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("profiles: list: %w", err)
	}
	return out, nil
}

// Find is the profile ref names (its id, or its name whatever the case), or a not-found problem.
func (s *Service) Find(ctx context.Context, ref string) (Profile, error) {
	ref = strings.TrimSpace(ref)
	p, err := scan(s.opts.Store.Reader().QueryRowContext(ctx,
		"SELECT "+columns+" FROM run_profiles WHERE id = ? OR name_key = ? ORDER BY id = ? DESC LIMIT 1", ref, key(ref), ref))
	if errors.Is(err, sql.ErrNoRows) {
		return Profile{}, notFound(ref)
	}
	if err != nil {
		return Profile{}, fmt.Errorf("profiles: read %s: %w", ref, err)
	}
	return p, nil
}

// Default is the default profile ([Pick]): the starred one, else the first saved; false when
// there are none (Quick settings).
func (s *Service) Default(ctx context.Context) (Profile, bool, error) {
	p, err := scan(s.opts.Store.Reader().QueryRowContext(ctx,
		"SELECT "+columns+" FROM run_profiles ORDER BY starred DESC, created_at, id LIMIT 1"))
	if errors.Is(err, sql.ErrNoRows) {
		return Profile{}, false, nil
	}
	if err != nil {
		return Profile{}, false, fmt.Errorf("profiles: read the default: %w", err)
	}
	return p, true, nil
}

// PickProfile is the profile ref names, or the default when ref is empty; false when ref is
// empty and there is none.
func (s *Service) PickProfile(ctx context.Context, ref string) (Profile, bool, error) {
	if strings.TrimSpace(ref) == "" {
		return s.Default(ctx)
	}
	p, err := s.Find(ctx, ref)
	return p, err == nil, err
}

// Create saves a new profile. A name, an agent and valid settings are needed; what is wrong is
// one sentence (invalid, or a conflict for a name taken) and saves nothing.
func (s *Service) Create(ctx context.Context, in Input) (Profile, error) {
	var p Profile
	if in.Name == nil || in.Agent == nil {
		return Profile{}, problem.Invalid("Give the profile a name and an agent.")
	}
	if err := s.apply(&p, in); err != nil {
		return Profile{}, err
	}
	p.ID = ledger.NewID("prf_")
	err := s.opts.Writer.Exec(ctx, func(t *ledger.Tx) error {
		p.CreatedAt, p.UpdatedAt = t.Now(), t.Now()
		if err := s.nameFree(t, p.Name, ""); err != nil {
			return err
		}
		set, err := json.Marshal(p.Settings)
		if err != nil {
			return fmt.Errorf("profiles: save %s: %w", p.ID, err)
		}
		if _, err := t.ExecContext(t.Context(), `INSERT INTO run_profiles (id, name, name_key, agent, folder, settings, starred, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)`, p.ID, p.Name, key(p.Name), p.Agent, p.Folder, string(set), store.Stamp(p.CreatedAt), store.Stamp(p.UpdatedAt)); err != nil {
			return fmt.Errorf("profiles: save %s: %w", p.ID, err)
		}
		return t.Emit(KindChanged, p.ID, Change{ID: p.ID})
	})
	if err != nil {
		return Profile{}, err
	}
	return s.get(ctx, p.ID)
}

// Update changes the fields in gives, as Create checks them.
func (s *Service) Update(ctx context.Context, id string, in Input) (Profile, error) {
	err := s.opts.Writer.Exec(ctx, func(t *ledger.Tx) error {
		p, err := scan(t.QueryRowContext(t.Context(), "SELECT "+columns+" FROM run_profiles WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(id)
		}
		if err != nil {
			return fmt.Errorf("profiles: read %s: %w", id, err)
		}
		if err := s.apply(&p, in); err != nil {
			return err
		}
		if err := s.nameFree(t, p.Name, id); err != nil {
			return err
		}
		set, err := json.Marshal(p.Settings)
		if err != nil {
			return fmt.Errorf("profiles: save %s: %w", id, err)
		}
		if _, err := t.ExecContext(t.Context(), `UPDATE run_profiles SET name = ?, name_key = ?, agent = ?, folder = ?, settings = ?, updated_at = ?
			WHERE id = ?`, p.Name, key(p.Name), p.Agent, p.Folder, string(set), store.Stamp(t.Now()), id); err != nil {
			return fmt.Errorf("profiles: save %s: %w", id, err)
		}
		return t.Emit(KindChanged, id, Change{ID: id})
	})
	if err != nil {
		return Profile{}, err
	}
	return s.get(ctx, id)
}

// Star makes the profile the default, unstarring the one that was; Unstar takes its star away,
// leaving the first saved as the default.
func (s *Service) Star(ctx context.Context, id string) (Profile, error) { return s.star(ctx, id, true) }

// Unstar takes the profile's star away.
func (s *Service) Unstar(ctx context.Context, id string) (Profile, error) {
	return s.star(ctx, id, false)
}

func (s *Service) star(ctx context.Context, id string, on bool) (Profile, error) {
	err := s.opts.Writer.Exec(ctx, func(t *ledger.Tx) error {
		var was bool
		err := t.QueryRowContext(t.Context(), "SELECT starred FROM run_profiles WHERE id = ?", id).Scan(&was)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(id)
		}
		if err != nil {
			return fmt.Errorf("profiles: read %s: %w", id, err)
		}
		if was == on {
			return nil
		}
		now := store.Stamp(t.Now())
		if on {
			var old string
			err := t.QueryRowContext(t.Context(), "SELECT id FROM run_profiles WHERE starred = 1").Scan(&old)
			switch {
			case err == nil:
				if _, err := t.ExecContext(t.Context(), "UPDATE run_profiles SET starred = 0, updated_at = ? WHERE id = ?", now, old); err != nil {
					return fmt.Errorf("profiles: unstar %s: %w", old, err)
				}
				if err := t.Emit(KindChanged, old, Change{ID: old}); err != nil {
					return err
				}
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("profiles: read the starred: %w", err)
			}
		}
		if _, err := t.ExecContext(t.Context(), "UPDATE run_profiles SET starred = ?, updated_at = ? WHERE id = ?", on, now, id); err != nil {
			return fmt.Errorf("profiles: star %s: %w", id, err)
		}
		return t.Emit(KindChanged, id, Change{ID: id})
	})
	if err != nil {
		return Profile{}, err
	}
	return s.get(ctx, id)
}

// Delete deletes a profile, or answers a not-found problem.
func (s *Service) Delete(ctx context.Context, id string) error {
	return s.opts.Writer.Exec(ctx, func(t *ledger.Tx) error {
		res, err := t.ExecContext(t.Context(), "DELETE FROM run_profiles WHERE id = ?", id)
		if err != nil {
			return fmt.Errorf("profiles: delete %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound(id)
		}
		return t.Emit(KindChanged, id, Change{ID: id})
	})
}

// apply checks in and sets what it gives on p.
func (s *Service) apply(p *Profile, in Input) error {
	if in.Name != nil {
		name := strings.Join(strings.Fields(*in.Name), " ")
		if n := utf8.RuneCountInString(name); n == 0 || n > MaxName {
			return problem.Invalid("A profile's name is 1 to %d characters.", MaxName)
		}
		p.Name = name
	}
	if in.Agent != nil {
		agent := strings.TrimSpace(*in.Agent)
		if s.opts.KnownAgent != nil {
			if err := s.opts.KnownAgent(agent); err != nil {
				return err
			}
		} else if agent == "" {
			return problem.Invalid("Name the profile's agent.")
		}
		p.Agent = agent
	}
	if in.Folder != nil {
		folder := strings.TrimSpace(*in.Folder)
		if folder != "" && !filepath.IsAbs(folder) {
			return problem.Invalid("The folder %q must be an absolute path.", *in.Folder)
		}
		if folder != "" {
			folder = filepath.Clean(folder)
		}
		p.Folder = folder
	}
	if in.Settings != nil {
		if _, err := in.Settings.Resolve(); err != nil {
			return err
		}
		p.Settings = *in.Settings
	}
	return nil
}

// nameFree says, as a conflict, when another profile than id has the name.
func (s *Service) nameFree(t *ledger.Tx, name, id string) error {
	var other string
	err := t.QueryRowContext(t.Context(), "SELECT id FROM run_profiles WHERE name_key = ? AND id != ?", key(name), id).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("profiles: check the name: %w", err)
	}
	return problem.Conflict("There is already a run profile named %q; choose another name.", name)
}

func (s *Service) get(ctx context.Context, id string) (Profile, error) {
	p, err := scan(s.opts.Store.Reader().QueryRowContext(ctx, "SELECT "+columns+" FROM run_profiles WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Profile{}, notFound(id)
	}
	if err != nil {
		return Profile{}, fmt.Errorf("profiles: read %s: %w", id, err)
	}
	return p, nil
}

const columns = "id, name, agent, folder, settings, starred, created_at, updated_at"

func scan(row interface{ Scan(...any) error }) (Profile, error) {
	var (
		p                     Profile
		set, created, updated string
	)
	if err := row.Scan(&p.ID, &p.Name, &p.Agent, &p.Folder, &set, &p.Starred, &created, &updated); err != nil {
		return Profile{}, err
	}
	if err := json.Unmarshal([]byte(set), &p.Settings); err != nil {
		return Profile{}, fmt.Errorf("profile %s's settings: %w", p.ID, err)
	}
	p.CreatedAt, _ = store.ParseTime(created)
	p.UpdatedAt, _ = store.ParseTime(updated)
	return p, nil
}

// key is a name as names are compared: whatever their case.
func key(name string) string { return strings.ToLower(strings.Join(strings.Fields(name), " ")) }
