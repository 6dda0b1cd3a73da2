package claude

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ensemblework/ensemble/engines"
)

// askTool is Claude Code's question tool. It reaches can_use_tool like any
// other; the answer goes back as the call's updatedInput with an "answers"
// map (question text → the chosen option's label, several joined with ", ",
// or the person's own words), which the tool then returns to the model, as
// the Agent SDK documents for canUseTool.
const askTool = "AskUserQuestion"

type askInput struct {
	Questions []struct {
		Question    string `json:"question"`
		Header      string `json:"header"`
		MultiSelect bool   `json:"multiSelect"`
		Options     []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
	} `json:"questions"`
}

func (s *session) askUser(ctx context.Context, r canUseToolRequest) (any, error) {
	var in askInput
	if err := json.Unmarshal(r.Input, &in); err != nil || len(in.Questions) == 0 {
		s.protocolError("Claude Code asked a question Ensemble cannot read.")
		return deny("Ensemble could not read the question; carry on without the answer or ask in your reply."), nil
	}
	answers := map[string]string{}
	for _, q := range in.Questions {
		question := engines.Question{Text: q.Question, Recommended: -1, FreeText: true}
		for i, o := range q.Options {
			label := o.Label
			if l, ok := strings.CutSuffix(label, "(Recommended)"); ok {
				label = strings.TrimSpace(l)
				question.Recommended = i
			}
			question.Options = append(question.Options, label)
		}
		a, err := s.host.Ask(ctx, question)
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return deny("The question could not be put to the person: " + err.Error()), nil
		}
		text := a.Text
		if a.Option >= 0 && a.Option < len(q.Options) {
			text = q.Options[a.Option].Label
		}
		answers[q.Question] = text
	}
	var input map[string]any
	if err := json.Unmarshal(r.Input, &input); err != nil {
		input = map[string]any{}
	}
	input["answers"] = answers
	return map[string]any{"behavior": "allow", "updatedInput": input}, nil
}
