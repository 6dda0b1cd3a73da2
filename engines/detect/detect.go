// Package detect knows which coding agents this computer has: for each driver, whether its CLI is
// installed on the trusted PATH, its version, and whether it is signed in. It asks each agent's own
// commands (engines.Detector), keeps the answers, and asks again every 10 minutes or on request.
package detect

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// Interval is how long a detection is trusted before it is made again.
const Interval = 10 * time.Minute

// Service detects the agents of a set of drivers.
type Service struct {
	drivers map[string]engines.Driver
	home    string

	mu       sync.Mutex // guards the following fields
	found    map[string]found
	inflight map[string]chan struct{} // closed when that agent's detection going ends
}

// found is one agent's detection and when it was made.
type found struct {
	d  engines.Detection
	at time.Time
}

// New returns a Service over drivers; home is the person's home folder.
func New(drivers map[string]engines.Driver, home string) *Service {
	return &Service{drivers: drivers, home: home, found: map[string]found{}, inflight: map[string]chan struct{}{}}
}

// Run refreshes every Interval until ctx ends.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	s.Refresh(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Refresh(ctx)
		}
	}
}

// Refresh detects every agent again, two at a time (each probe starts a program).
func (s *Service) Refresh(ctx context.Context) []engines.Detection { return s.each(ctx, true) }

// each detects the agents, two at a time: every one (all), or only those not detected within
// Interval.
func (s *Service) each(ctx context.Context, all bool) []engines.Detection {
	names := make([]string, 0, len(s.drivers))
	for n := range s.drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]engines.Detection, len(names))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = s.detect(ctx, n, all)
		}()
	}
	wg.Wait()
	return out
}

// detect is one agent's detection: the one made within Interval unless again, else a new one.
// A detection already going for that agent is waited for, not started twice, so a run given to
// an agent while the start-up detection runs waits for that agent's probe alone.
func (s *Service) detect(ctx context.Context, name string, again bool) engines.Detection {
	s.mu.Lock()
	if ch, ok := s.inflight[name]; ok {
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.found[name].d
	}
	if f, ok := s.found[name]; ok && !again && time.Since(f.at) <= Interval {
		s.mu.Unlock()
		return f.d
	}
	ch := make(chan struct{})
	s.inflight[name] = ch
	s.mu.Unlock()

	d := detectOne(ctx, name, s.drivers[name], s.home)
	s.mu.Lock()
	s.found[name] = found{d: d, at: time.Now()}
	delete(s.inflight, name)
	s.mu.Unlock()
	close(ch)
	return d
}

// detectOne asks a driver; one that cannot detect (a stand-in) counts as installed.
func detectOne(ctx context.Context, name string, d engines.Driver, home string) engines.Detection {
	if det, ok := d.(engines.Detector); ok {
		got := det.Detect(ctx, home)
		got.Name = name
		return got
	}
	return engines.Detection{Name: name, Title: name, Installed: true, SignedIn: engines.SignInUnknown}
}

// List returns the agents as last detected (detecting again those older than Interval).
func (s *Service) List(ctx context.Context) []engines.Detection { return s.each(ctx, false) }

// Ready says whether the agent can run now: an error wrapping engines.ErrNotInstalled or
// engines.ErrSignedOut, with the sentence and the command that fixes it, when it cannot. Only
// that agent is detected, when its detection is older than Interval.
func (s *Service) Ready(ctx context.Context, name string) error {
	if _, ok := s.drivers[name]; !ok {
		return nil
	}
	switch d := s.detect(ctx, name, false); {
	case d.Name == "":
		return nil // the wait for its detection ended first: the run finds out
	case !d.Installed:
		return &NotReady{Err: engines.ErrNotInstalled, Msg: d.Problem}
	case d.SignedIn == engines.SignedOut:
		return &NotReady{Err: engines.ErrSignedOut, Msg: d.Problem}
	}
	return nil
}

// Models is the catalog the agent reported as last detected: what each of its models takes
// (thinking levels, context windows, fast mode). nil when it reported names only, or nothing.
func (s *Service) Models(ctx context.Context, name string) []engines.ModelInfo {
	if _, ok := s.drivers[name]; !ok {
		return nil
	}
	return s.detect(ctx, name, false).Catalog
}

// NotReady is an agent that cannot run now. Its text is the sentence for the person (what is wrong
// and the command that fixes it); it matches engines.ErrNotInstalled or engines.ErrSignedOut.
type NotReady struct {
	Err error
	Msg string
}

func (e *NotReady) Error() string { return e.Msg }
func (e *NotReady) Unwrap() error { return e.Err }
