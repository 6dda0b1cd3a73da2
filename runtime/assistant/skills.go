package assistant

import (
	"context"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/skills"
)

// The person's personal skills are kept by runtime/skills; the assistant saves and lists them for
// the API and names them in a turn's instructions.

// Skills lists the saved skills by name, without their bodies.
func (s *Service) Skills(ctx context.Context) ([]skills.Skill, error) {
	return s.skills(ctx, 0)
}

func (s *Service) skills(ctx context.Context, limit int) ([]skills.Skill, error) {
	return skills.List(ctx, s.cfg.Store.Reader(), limit)
}

// Skill returns one saved skill with its body, or a not-found problem. It makes the Service a
// SkillReader for hub_read_skill.
func (s *Service) Skill(ctx context.Context, name string) (skills.Skill, error) {
	return skills.Read(ctx, s.cfg.Store.Reader(), name)
}

// PutSkill saves a skill under name, replacing one saved there. Input that is not valid is an
// invalid problem and saves nothing.
func (s *Service) PutSkill(ctx context.Context, name string, in skills.Input) (skills.Skill, error) {
	return skills.Put(ctx, s.cfg.Writer, name, in)
}

// DeleteSkill deletes a saved skill, or answers a not-found problem.
func (s *Service) DeleteSkill(ctx context.Context, name string) error {
	return skills.Delete(ctx, s.cfg.Writer, name)
}

// skillsBlock is the instructions' paragraph naming the saved skills (at most skills.MaxNamed), or
// "" when there are none.
func skillsBlock(sks []skills.Skill) string {
	if len(sks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("The person's personal skills (instructions they saved; read one with hub_read_skill when it applies to the request, and follow it):")
	for _, sk := range sks[:min(len(sks), skills.MaxNamed)] {
		fmt.Fprintf(&b, "\n- %s: %s", sk.Name, sk.Title)
	}
	return b.String()
}
