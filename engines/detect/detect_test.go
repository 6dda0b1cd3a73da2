package detect

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

type standIn struct {
	name string
	det  *engines.Detection
}

func (s standIn) Name() string { return s.name }
func (s standIn) Start(context.Context, engines.Spec, engines.Host) (engines.Run, error) {
	return nil, errors.New("not for running")
}

type detecting struct {
	standIn
	calls *int
}

func (d detecting) Detect(context.Context, string) engines.Detection {
	*d.calls++
	return *d.det
}

func TestReady(t *testing.T) {
	calls := 0
	s := New(map[string]engines.Driver{
		"missing": detecting{standIn{"missing", &engines.Detection{Problem: "Install it with `npm i -g x`."}}, &calls},
		"out":     detecting{standIn{"out", &engines.Detection{Installed: true, SignedIn: engines.SignedOut, Problem: "Run `x login`."}}, &calls},
		"ok":      detecting{standIn{"ok", &engines.Detection{Installed: true, SignedIn: engines.SignedIn, Version: "1.2"}}, &calls},
		"plain":   standIn{"plain", nil},
	}, t.TempDir())
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		want error
	}{
		{"missing", engines.ErrNotInstalled},
		{"out", engines.ErrSignedOut},
		{"ok", nil},
		{"plain", nil},
		{"unknown", nil},
	} {
		err := s.Ready(ctx, tc.name)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("Ready(%s) = %v, want %v", tc.name, err, tc.want)
		}
	}
	if calls != 3 {
		t.Errorf("detected %d times for 5 questions, want once per agent (3)", calls)
	}
	list := s.List(ctx)
	if len(list) != 4 || list[0].Name != "missing" || list[3].Name != "plain" || !list[3].Installed {
		t.Errorf("list = %+v", list)
	}
}

func TestModels(t *testing.T) {
	calls := 0
	cat := []engines.ModelInfo{{ID: "big", Default: true, Efforts: []string{"low", "high"}}}
	s := New(map[string]engines.Driver{
		"described": detecting{standIn{"described", &engines.Detection{Installed: true, Models: []string{"big"}, Catalog: cat}}, &calls},
		"names":     detecting{standIn{"names", &engines.Detection{Installed: true, Models: []string{"a", "b"}}}, &calls},
		"plain":     standIn{"plain", nil},
	}, t.TempDir())
	for _, tc := range []struct {
		name string
		want []engines.ModelInfo
	}{
		{"described", cat},
		{"names", nil},
		{"plain", nil},
		{"unknown", nil},
	} {
		if got := s.Models(context.Background(), tc.name); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Models(%s) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// gated is a detector that counts its probes and waits for its gate, as a slow CLI would.
type gated struct {
	standIn
	probes *atomic.Int32
	gate   chan struct{}
}

func (g gated) Detect(context.Context, string) engines.Detection {
	g.probes.Add(1)
	<-g.gate
	return *g.det
}

// Ready asks only its own agent, and a probe already going for it (the start-up detection) is
// waited for, not started again; the other agents' slow probes do not hold it up.
func TestReadyProbesOnlyItsAgent(t *testing.T) {
	var a, b atomic.Int32
	gateA, gateB := make(chan struct{}), make(chan struct{})
	ok := &engines.Detection{Installed: true, SignedIn: engines.SignedIn}
	s := New(map[string]engines.Driver{
		"a": gated{standIn{"a", ok}, &a, gateA},
		"b": gated{standIn{"b", ok}, &b, gateB},
	}, t.TempDir())
	ctx := context.Background()
	refreshed := make(chan struct{})
	go func() { s.Refresh(ctx); close(refreshed) }()
	for a.Load() == 0 || b.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ready := make(chan error, 1)
	go func() { ready <- s.Ready(ctx, "a") }()
	close(gateA)
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("Ready(a) = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ready(a) waited for b's probe")
	}
	close(gateB)
	<-refreshed
	if a.Load() != 1 || b.Load() != 1 {
		t.Fatalf("probes: a %d, b %d; want one each", a.Load(), b.Load())
	}
}
