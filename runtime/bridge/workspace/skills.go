package workspace

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/skills"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Skills are the person's own instructions for how they work (runtime/skills keeps them). They
// are the one text the bridge labels trusted: the person wrote them. Only the current body is
// kept, so older bodies are never given.

// skillCard is a skill in a list: its name (its id), title and handle, without the body.
type skillCard struct {
	Name      string `json:"name"`
	ID        string `json:"id"`
	Ref       string `json:"ref"`
	Title     string `json:"title"`
	UpdatedAt string `json:"updatedAt"`
}

// skillRef is a skill's handle. Skills are named, so the name is the id.
func skillRef(name string) string { return "ensemble://skill/" + name }

func (s *Service) listSkills(ctx context.Context) ([]skillCard, error) {
	sks, err := skills.List(ctx, s.db, 0)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	out := make([]skillCard, len(sks))
	for i, sk := range sks {
		out[i] = skillCard{Name: sk.Name, ID: sk.Name, Ref: skillRef(sk.Name), Title: sk.Title, UpdatedAt: store.Stamp(sk.UpdatedAt)}
	}
	return out, nil
}

// Skill reads one skill's current body, by name or handle; a name that is not saved is a
// not-found problem. It makes the Service a tools.SkillReader, so hub_read_skill runs from the
// bridge as it runs in the assistant.
func (s *Service) Skill(ctx context.Context, name string) (skills.Skill, error) {
	name = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "ensemble://skill/")))
	sk, err := skills.Read(ctx, s.db, name)
	if err != nil {
		return skills.Skill{Name: name}, err
	}
	return sk, nil
}

// Skills lists the person's skills, or reads one (by name or handle) with its current body.
func (s *Service) Skills(ctx context.Context, in ListInput) (map[string]any, error) {
	if in.ID != "" {
		sk, err := s.Skill(ctx, in.ID)
		if problem.Is(err, problem.KindNotFound) {
			return nil, refuse(http.StatusNotFound, "There is no skill %q; ensemble_skills lists them.", sk.Name)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"kind": "skill", "ref": skillRef(sk.Name), "name": sk.Name, "title": sk.Title,
			"updatedAt": sk.UpdatedAt, "trust": "trusted", "body": sk.Body,
			"note": "A skill is the person's own instruction for how they work; only its current body is kept."}, nil
	}
	all, err := s.listSkills(ctx)
	if err != nil {
		return nil, err
	}
	var out []skillCard
	for _, c := range all {
		if matches(in.Query, c.Name, c.Title) {
			out = append(out, c)
		}
	}
	ans := paged("skills", nonNil(out), in)
	ans["trust"] = "trusted"
	if len(all) == 0 {
		ans["message"] = "The person has saved no skills yet, so there is nothing on how they work to follow."
	}
	return ans, nil
}

// maxBriefSkills and maxBriefSkillBody bound the skills a brief carries.
const (
	maxBriefSkills    = 10
	maxBriefSkillBody = 1500
)

// howIWork is the person's current skills for a brief, trusted, each cut to maxBriefSkillBody
// characters with the way to read it whole.
func (s *Service) howIWork(ctx context.Context) ([]map[string]any, error) {
	all, err := s.listSkills(ctx)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, c := range all[:min(len(all), maxBriefSkills)] {
		sk, err := s.Skill(ctx, c.Name)
		if err != nil {
			return nil, err
		}
		body, more := excerpt(sk.Body, 0, maxBriefSkillBody, c.Ref)
		if more != "" {
			more = "ensemble_skills id=" + c.Name + " reads it whole."
		}
		out = append(out, map[string]any{"ref": c.Ref, "name": c.Name, "title": c.Title, "trust": "trusted", "body": body, "more": more})
	}
	return out, nil
}
