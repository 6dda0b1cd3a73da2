package node

import (
	"context"
	"errors"

	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// ComputerAnswers are the answers its owner kept for a node's computer cards (This mission, Always),
// newest first.
func (s *Service) ComputerAnswers(ctx context.Context, ref string) ([]computer.Answer, error) {
	n, err := s.Node(ctx, ref)
	if err != nil {
		return nil, err
	}
	if s.cfg.Computer == nil {
		return []computer.Answer{}, nil
	}
	return s.cfg.Computer.Answers.List(ctx, n.ID)
}

// RevokeComputerAnswer drops one kept answer: the node's next call there asks again.
func (s *Service) RevokeComputerAnswer(ctx context.Context, ref, id string) error {
	n, err := s.Node(ctx, ref)
	if err != nil {
		return err
	}
	if s.cfg.Computer == nil {
		return problem.NotFound("%s has no kept answer %q.", n.Name, id)
	}
	err = s.cfg.Computer.Answers.Revoke(ctx, n.ID, id)
	if errors.Is(err, computer.ErrNoAnswer) {
		return problem.NotFound("%s has no kept answer %q.", n.Name, id)
	}
	return err
}
