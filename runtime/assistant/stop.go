package assistant

import (
	"context"
	"errors"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// ErrStopped ends a turn that was stopped ([Service.Stop], or its caller went away). Its text is
// the sentence the chat shows; what was streamed before is saved, marked stopped.
var ErrStopped = errors.New("Stopped.")

// running is a turn in progress: a conversation answers one turn at a time.
type running struct {
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the turn's reply is saved
}

// claim marks a conversation busy with a turn whose context is derived from ctx. It fails with a
// conflict when the conversation is already answering.
func (s *Service) claim(ctx context.Context, id string) (context.Context, *running, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turns[id] != nil {
		return nil, nil, problem.Conflict("This conversation is still answering; wait for it or stop it.")
	}
	tctx, cancel := context.WithCancelCause(ctx)
	r := &running{cancel: cancel, done: make(chan struct{})}
	s.turns[id] = r
	return tctx, r, nil
}

// release ends a claim: the conversation is free and whoever waits on Stop wakes.
func (s *Service) release(id string, r *running) {
	s.mu.Lock()
	if s.turns[id] == r {
		delete(s.turns, id)
	}
	s.mu.Unlock()
	r.cancel(nil)
	close(r.done)
}

// Busy reports whether a conversation is answering a turn now.
func (s *Service) Busy(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns[id] != nil
}

// Stop cancels the conversation's running turn and waits until what it streamed is saved (or ctx
// ends). A conversation that is not answering gets a conflict; an unknown one a
// not-found problem.
func (s *Service) Stop(ctx context.Context, id string) error {
	s.mu.Lock()
	r := s.turns[id]
	s.mu.Unlock()
	if r == nil {
		ok, err := s.exists(ctx, id)
		switch {
		case err != nil:
			return err
		case !ok:
			return errNoConversation
		}
		return problem.Conflict("Nothing is running in this conversation.")
	}
	r.cancel(ErrStopped)
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops every running turn and waits until each is saved (or ctx ends). Call it before the
// store closes.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	all := make([]*running, 0, len(s.turns))
	for _, r := range s.turns {
		all = append(all, r)
	}
	s.mu.Unlock()
	s.endLife()
	for _, r := range all {
		r.cancel(ErrStopped)
	}
	for _, r := range all {
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	held := make(chan struct{})
	go func() { s.wg.Wait(); close(held) }()
	select {
	case <-held:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
