package detect

import (
	"context"
	"errors"
	"reflect"
	"testing"

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
