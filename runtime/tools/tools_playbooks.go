package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/playbooks"
)

// howToIn is hub_how_to's input.
type howToIn struct {
	Name string `json:"name" check:"minLength=1" jsonschema:"the playbook's name"`
}

func howToTool() Tool {
	var names []string
	for _, p := range playbooks.Builtin() {
		names = append(names, p.Name+" ("+p.Title+")")
	}
	return typedTool(Tool{
		Name: "hub_how_to",
		Area: "skills", // playbooks are the built-in skills (spec 000 intro)
		Risk: RiskLow,
		Description: "Load a playbook: how to use the tools for one kind of request, and the tools it needs for the rest of this turn. " +
			"Playbooks: " + strings.Join(names, ", ") + ".",
	}, Typed[howToIn]{
		Run: func(ctx context.Context, tc *ToolContext, in howToIn) (Result, error) {
			p := playbooks.Find(playbooks.Builtin(), in.Name)
			if p == nil {
				var names []string
				for _, p := range playbooks.Builtin() {
					names = append(names, p.Name)
				}
				return Result{}, fmt.Errorf("There is no playbook named %q; the playbooks are %s.", in.Name, strings.Join(names, ", "))
			}
			return Result{Summary: fmt.Sprintf("Read the playbook %s.", quoted(p.Title)),
				Data: map[string]any{"name": p.Name, "tools": p.Tools, "guide": p.Body}}, nil
		},
	})
}
