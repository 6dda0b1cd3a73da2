package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/skills"
)

// SkillReader reads one personal skill; the assistant's Service and the bridge's are.
type SkillReader interface {
	Skill(ctx context.Context, name string) (skills.Skill, error)
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
