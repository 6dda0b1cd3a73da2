// Package skills keeps the person's personal skills: instructions they saved for the assistant,
// by name. It owns the skills table; the assistant saves and lists them, and the assistant's
// hub_read_skill and the bridge read them through here.
package skills

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// KindSkill is the event published when a personal skill is saved or deleted. Its data is a
// [Change]; it carries no text.
const KindSkill events.Kind = "assistant.skill"

// Change is the data of a [KindSkill] event.
type Change struct {
	Name   string `json:"name"`
	Change string `json:"change"` // "saved" or "deleted"
}

// Skill is one of the person's personal skills: instructions they saved for the assistant. The
// instructions name it by name and title; the model reads its body with hub_read_skill.
type Skill struct {
	Name      string    `json:"name"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Input is a skill to save under a name.
type Input struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// Skill limits.
const (
	maxTitle = 120
	maxBody  = 20000
	// MaxNamed is the most skills the instructions name; the rest stay saved but unnamed.
	MaxNamed = 20
)

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,47}$`)

// notFound is a skill name that is not saved.
func notFound(name string) error {
	return problem.NotFound("There is no personal skill named %q.", name)
}

func checkName(name string) error {
	if !nameRe.MatchString(name) {
		return problem.Invalid("A skill's name is 1 to 48 lowercase letters, digits and dashes, starting with a letter or digit (such as weekly-review).")
	}
	return nil
}

// List lists up to limit saved skills (all when limit is 0) by name, without their bodies.
func List(ctx context.Context, q events.Querier, limit int) ([]Skill, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := q.QueryContext(ctx, "SELECT name, title, updated_at FROM skills ORDER BY name LIMIT ?", limit)
	if err != nil {
		return nil, fmt.Errorf("skills: list: %w", err)
	}
	defer rows.Close()
	out := []Skill{}
	for rows.Next() {
		var (
			sk Skill
			at string
		)
		if err := rows.Scan(&sk.Name, &sk.Title, &at); err != nil {
			return nil, fmt.Errorf("skills: list: %w", err)
		}
		sk.UpdatedAt = store.ReadTime(at)
		out = append(out, sk)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("skills: list: %w", err)
	}
	return out, nil
}

// Read reads one saved skill with its body, or a not-found problem.
func Read(ctx context.Context, q events.Querier, name string) (Skill, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	sk := Skill{Name: name}
	var at string
	err := q.QueryRowContext(ctx, "SELECT title, body, updated_at FROM skills WHERE name = ?", name).
		Scan(&sk.Title, &sk.Body, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Skill{}, notFound(name)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("skills: read %s: %w", name, err)
	}
	sk.UpdatedAt = store.ReadTime(at)
	return sk, nil
}

// Put saves a skill under name through w, replacing one saved there. Input that is not valid is
// an invalid problem and saves nothing.
func Put(ctx context.Context, w *ledger.Writer, name string, in Input) (Skill, error) {
	if err := checkName(name); err != nil {
		return Skill{}, err
	}
	title, body := strings.Join(strings.Fields(in.Title), " "), strings.TrimSpace(in.Body)
	switch {
	case title == "":
		return Skill{}, problem.Invalid("Give the skill a title: a few words saying when it applies.")
	case utf8.RuneCountInString(title) > maxTitle:
		return Skill{}, problem.Invalid("A skill's title is at most %d characters.", maxTitle)
	case body == "":
		return Skill{}, problem.Invalid("Write the skill's instructions in its body.")
	case utf8.RuneCountInString(body) > maxBody:
		return Skill{}, problem.Invalid("A skill's body is at most %d characters; split it into two skills.", maxBody)
	}
	sk := Skill{Name: name, Title: title, Body: body}
	err := w.Exec(ctx, func(t *ledger.Tx) error {
		now := t.Now()
		sk.UpdatedAt = store.ReadTime(store.Stamp(now))
		if _, err := t.ExecContext(t.Context(), `INSERT INTO skills (name, title, body, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET title = excluded.title, body = excluded.body, updated_at = excluded.updated_at`,
			name, title, body, store.Stamp(now)); err != nil {
			return fmt.Errorf("skills: save %s: %w", name, err)
		}
		return t.Emit(KindSkill, name, Change{Name: name, Change: "saved"})
	})
	if err != nil {
		return Skill{}, err
	}
	return sk, nil
}

// Delete deletes a saved skill through w, or answers a not-found problem.
func Delete(ctx context.Context, w *ledger.Writer, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	return w.Exec(ctx, func(t *ledger.Tx) error {
		res, err := t.ExecContext(t.Context(), "DELETE FROM skills WHERE name = ?", name)
		if err != nil {
			return fmt.Errorf("skills: delete %s: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound(name)
		}
		return t.Emit(KindSkill, name, Change{Name: name, Change: "deleted"})
	})
}
