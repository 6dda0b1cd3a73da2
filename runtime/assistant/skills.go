package assistant

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
// [SkillChange]; it carries no text.
const KindSkill events.Kind = "assistant.skill"

// SkillChange is the data of a [KindSkill] event.
type SkillChange struct {
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

// SkillInput is a skill to save under a name.
type SkillInput struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// Skill limits.
const (
	maxSkillTitle = 120
	maxSkillBody  = 20000
	// MaxNamedSkills is the most skills the instructions name; the rest stay saved but unnamed.
	MaxNamedSkills = 20
)

var skillNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,47}$`)

// skillNotFound is a skill name that is not saved.
func skillNotFound(name string) error {
	return problem.NotFound("There is no personal skill named %q.", name)
}

// SkillReader reads one personal skill; *Service is one.
type SkillReader interface {
	Skill(ctx context.Context, name string) (Skill, error)
}

func checkSkillName(name string) error {
	if !skillNameRe.MatchString(name) {
		return problem.Invalid("A skill's name is 1 to 48 lowercase letters, digits and dashes, starting with a letter or digit (such as weekly-review).")
	}
	return nil
}

// Skills lists the saved skills by name, without their bodies.
func (s *Service) Skills(ctx context.Context) ([]Skill, error) {
	return s.skills(ctx, 0)
}

func (s *Service) skills(ctx context.Context, limit int) ([]Skill, error) {
	return ReadSkills(ctx, s.cfg.Store.Reader(), limit)
}

// ReadSkills lists up to limit saved skills (all when limit is 0) by name, without their bodies:
// the skills table is the assistant's, and the bridge reads it through here.
func ReadSkills(ctx context.Context, q events.Querier, limit int) ([]Skill, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := q.QueryContext(ctx, "SELECT name, title, updated_at FROM skills ORDER BY name LIMIT ?", limit)
	if err != nil {
		return nil, fmt.Errorf("assistant: list skills: %w", err)
	}
	defer rows.Close()
	out := []Skill{}
	for rows.Next() {
		var (
			sk Skill
			at string
		)
		if err := rows.Scan(&sk.Name, &sk.Title, &at); err != nil {
			return nil, fmt.Errorf("assistant: list skills: %w", err)
		}
		sk.UpdatedAt = store.ReadTime(at)
		out = append(out, sk)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("assistant: list skills: %w", err)
	}
	return out, nil
}

// Skill returns one saved skill with its body, or a not-found problem.
func (s *Service) Skill(ctx context.Context, name string) (Skill, error) {
	return ReadSkill(ctx, s.cfg.Store.Reader(), name)
}

// ReadSkill reads one saved skill with its body, or a not-found problem.
func ReadSkill(ctx context.Context, q events.Querier, name string) (Skill, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	sk := Skill{Name: name}
	var at string
	err := q.QueryRowContext(ctx, "SELECT title, body, updated_at FROM skills WHERE name = ?", name).
		Scan(&sk.Title, &sk.Body, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Skill{}, skillNotFound(name)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("assistant: read skill %s: %w", name, err)
	}
	sk.UpdatedAt = store.ReadTime(at)
	return sk, nil
}

// PutSkill saves a skill under name, replacing one saved there. Input that is not valid is an
// invalid problem and saves nothing.
func (s *Service) PutSkill(ctx context.Context, name string, in SkillInput) (Skill, error) {
	if err := checkSkillName(name); err != nil {
		return Skill{}, err
	}
	title, body := strings.Join(strings.Fields(in.Title), " "), strings.TrimSpace(in.Body)
	switch {
	case title == "":
		return Skill{}, problem.Invalid("Give the skill a title: a few words saying when it applies.")
	case utf8.RuneCountInString(title) > maxSkillTitle:
		return Skill{}, problem.Invalid("A skill's title is at most %d characters.", maxSkillTitle)
	case body == "":
		return Skill{}, problem.Invalid("Write the skill's instructions in its body.")
	case utf8.RuneCountInString(body) > maxSkillBody:
		return Skill{}, problem.Invalid("A skill's body is at most %d characters; split it into two skills.", maxSkillBody)
	}
	sk := Skill{Name: name, Title: title, Body: body}
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		now := t.Now()
		sk.UpdatedAt = store.ReadTime(store.Stamp(now))
		if _, err := t.ExecContext(t.Context(), `INSERT INTO skills (name, title, body, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET title = excluded.title, body = excluded.body, updated_at = excluded.updated_at`,
			name, title, body, store.Stamp(now)); err != nil {
			return fmt.Errorf("assistant: save skill %s: %w", name, err)
		}
		return t.Emit(KindSkill, name, SkillChange{Name: name, Change: "saved"})
	})
	if err != nil {
		return Skill{}, err
	}
	return sk, nil
}

// DeleteSkill deletes a saved skill, or answers a not-found problem.
func (s *Service) DeleteSkill(ctx context.Context, name string) error {
	if err := checkSkillName(name); err != nil {
		return err
	}
	return s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		res, err := t.ExecContext(t.Context(), "DELETE FROM skills WHERE name = ?", name)
		if err != nil {
			return fmt.Errorf("assistant: delete skill %s: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return skillNotFound(name)
		}
		return t.Emit(KindSkill, name, SkillChange{Name: name, Change: "deleted"})
	})
}

// skillsBlock is the instructions' paragraph naming the saved skills (at most MaxNamedSkills), or
// "" when there are none.
func skillsBlock(sks []Skill) string {
	if len(sks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("The person's personal skills (instructions they saved; read one with hub_read_skill when it applies to the request, and follow it):")
	for _, sk := range sks[:min(len(sks), MaxNamedSkills)] {
		fmt.Fprintf(&b, "\n- %s: %s", sk.Name, sk.Title)
	}
	return b.String()
}

// readSkillIn is hub_read_skill's input.
type readSkillIn struct {
	Name string `json:"name" check:"minLength=1" jsonschema:"the skill's name"`
}

func readSkillTool() Tool {
	return typedTool(Tool{
		Name:        "hub_read_skill",
		Area:        "skills",
		Risk:        RiskLow,
		Description: "Read one of the person's personal skills (their saved instructions, named in the instructions) by its name.",
	}, Typed[readSkillIn]{
		Run: func(ctx context.Context, tc *ToolContext, in readSkillIn) (Result, error) {
			if tc.Skills == nil {
				return Result{}, errors.New("Personal skills cannot be read in this turn.")
			}
			sk, err := tc.Skills.Skill(ctx, in.Name)
			if err != nil {
				return Result{}, err
			}
			return Result{Summary: fmt.Sprintf("Read the skill %s.", quoted(sk.Title)),
				Data: map[string]any{"name": sk.Name, "title": sk.Title, "instructions": sk.Body}}, nil
		},
	})
}
