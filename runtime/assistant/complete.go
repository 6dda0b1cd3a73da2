package assistant

import (
	"context"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// Complete is one model call outside any conversation, for a node's sub-agent (web_task): the
// provider and model a turn would use, the known secrets hidden on the way out as in a turn,
// nothing kept. An AI plan runs only inside its agent's session, so it cannot answer one call.
func (s *Service) Complete(ctx context.Context, provider, model string, req models.Request) (models.Response, error) {
	if IsPlan(provider) {
		return models.Response{}, problem.Invalid("%s runs only inside its agent's session; choose a model with an API key for this.", provider)
	}
	if model == "" {
		return models.Response{}, problem.Invalid("Choose a model: set one in the assistant's settings.")
	}
	if req.Effort != "" && models.CheckEffort(provider, model, req.Effort) != nil {
		req.Effort = "" // the model's own default rather than no answer
	}
	p, err := s.cfg.Providers(provider, "")
	if err != nil {
		return models.Response{}, problem.New(problem.KindInvalid, err.Error())
	}
	req.Model = model
	resp, err := p.Stream(ctx, s.outbound(req), nil)
	if err != nil {
		return resp, fmt.Errorf("assistant: one model call: %w", err)
	}
	return resp, nil
}
