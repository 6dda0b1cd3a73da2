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

	mu    sync.Mutex // guards the following fields
	found map[string]engines.Detection
	at    time.Time
}

// New returns a Service over drivers; home is the person's home folder.
func New(drivers map[string]engines.Driver, home string) *Service {
	return &Service{drivers: drivers, home: home, found: map[string]engines.Detection{}}
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
func (s *Service) Refresh(ctx context.Context) []engines.Detection {
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
			out[i] = detectOne(ctx, n, s.drivers[n], s.home)
		}()
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range out {
		s.found[d.Name] = d
	}
	s.at = time.Now()
	return out
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

// List returns the agents as last detected (detecting them first if that is older than Interval).
func (s *Service) List(ctx context.Context) []engines.Detection {
	s.mu.Lock()
	stale := time.Since(s.at) > Interval || len(s.found) != len(s.drivers)
	s.mu.Unlock()
	if stale {
		return s.Refresh(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]engines.Detection, 0, len(s.found))
	for _, d := range s.found {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b engines.Detection) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return out
}

// Ready says whether the agent can run now: an error wrapping engines.ErrNotInstalled or
// engines.ErrSignedOut, with the sentence and the command that fixes it, when it cannot.
func (s *Service) Ready(ctx context.Context, name string) error {
	for _, d := range s.List(ctx) {
		if d.Name != name {
			continue
		}
		switch {
		case !d.Installed:
			return &NotReady{Err: engines.ErrNotInstalled, Msg: d.Problem}
		case d.SignedIn == engines.SignedOut:
			return &NotReady{Err: engines.ErrSignedOut, Msg: d.Problem}
		}
		return nil
	}
	return nil
}

// Models is the catalog the agent reported as last detected: what each of its models takes
// (thinking levels, context windows, fast mode). nil when it reported names only, or nothing.
func (s *Service) Models(ctx context.Context, name string) []engines.ModelInfo {
	for _, d := range s.List(ctx) {
		if d.Name == name {
			return d.Catalog
		}
	}
	return nil
}

// NotReady is an agent that cannot run now. Its text is the sentence for the person (what is wrong
// and the command that fixes it); it matches engines.ErrNotInstalled or engines.ErrSignedOut.
type NotReady struct {
	Err error
	Msg string
}

func (e *NotReady) Error() string { return e.Msg }
func (e *NotReady) Unwrap() error { return e.Err }
