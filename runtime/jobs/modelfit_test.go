package jobs

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

func TestFitModel(t *testing.T) {
	catalog := []engines.ModelInfo{
		{ID: "big", Name: "Big", Default: true, Efforts: []string{"low", "high"}, DefaultEffort: "high", Context: 1_000_000, Fast: true},
		{ID: "two", Name: "Two", Efforts: []string{"low", "high"}, Context: 200_000, LongContext: 1_000_000},
		{ID: "small", Context: 200_000},
	}
	asked := func(model, effort, context string, fast bool) Settings {
		return Settings{Model: model, Effort: effort, ContextTier: context, Fast: fast, MaxTurns: 3}
	}
	for _, c := range []struct {
		name    string
		catalog []engines.ModelInfo
		in      Settings
		want    Settings
		notes   []string
	}{
		{"nothing chosen", catalog, asked("nope", "", "", false), asked("nope", "", "", false), nil},
		{"all taken", catalog, asked("two", "low", "long", false), asked("two", "low", "long", false), nil},
		{"default model's choices", catalog, asked("", "high", "", true), asked("", "high", "", true), nil},
		{"default model has one window", catalog, asked("", "", "long", false), asked("", "", "", false),
			[]string{"Big has one context window; the long one is left out."}},
		{"level not taken", catalog, asked("two", "max", "", false), asked("two", "", "", false),
			[]string{`Two does not take the thinking level "max" (it takes low, high); it thinks at its default.`}},
		{"no levels, no fast", catalog, asked("small", "high", "", true), asked("small", "", "", false),
			[]string{`The model small takes no thinking level; "high" is left out.`, "The model small has no fast mode; the run goes without it."}},
		{"model not described", catalog, asked("typed", "high", "long", true), asked("typed", "high", "", false),
			[]string{"The model typed is not among the models the agent reported, so it is not known to have a long context window; the standard one is used.",
				"The model typed is not among the models the agent reported, so it is not known to have a fast mode; the run goes without it."}},
		{"names only", nil, asked("", "high", "", true), asked("", "high", "", false),
			[]string{"The agent does not describe its models, so its model is not known to have a fast mode; the run goes without it."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, notes := fitModel(c.in, c.catalog)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("sent %+v, want %+v", got, c.want)
			}
			if !slices.Equal(notes, c.notes) {
				t.Errorf("notes %q, want %q", notes, c.notes)
			}
		})
	}
}

// TestRunSendsModelChoices: a run's context window and fast mode reach the agent when its model
// takes them, are kept with the job, and one it does not take is left out with a note on the run.
func TestRunSendsModelChoices(t *testing.T) {
	e := newEnv(t, []step{{result: &engines.Result{Summary: "ok"}}}, []step{{result: &engines.Result{Summary: "ok"}}})
	e.service(false)
	e.svc.opts.Models = func(_ context.Context, agent string) []engines.ModelInfo {
		if agent != "fake" {
			t.Errorf("catalog asked of %q", agent)
		}
		return []engines.ModelInfo{{ID: "two", Name: "Two", Efforts: []string{"high"}, LongContext: 1_000_000, Fast: true}, {ID: "one", Name: "One"}}
	}
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	str := func(v string) *string { return &v }
	yes := true
	for i, c := range []struct {
		model   string
		context string
		fast    bool
		note    string
	}{
		{"two", "long", true, ""},
		{"one", "", false, "One has one context window; the long one is left out."},
	} {
		j := e.assign(AssignRequest{Folder: e.folder, Settings: SettingsInput{Model: str(c.model), ContextTier: str("long"), Fast: &yes}})
		j = e.waitEnded(j.ID, Done)
		if j.Settings.ContextTier != "long" || !j.Settings.Fast {
			t.Errorf("%s: kept settings %+v", c.model, j.Settings)
		}
		spec := e.driver.view().specs[i]
		if spec.Model != c.model || spec.Context != c.context || spec.Fast != c.fast {
			t.Errorf("%s: spec context %q fast %t, want %q %t", c.model, spec.Context, spec.Fast, c.context, c.fast)
		}
		var notes []string
		for _, x := range e.trace(j.ID) {
			if x.Kind == KindNote {
				notes = append(notes, x.Data.Text)
			}
		}
		if c.note == "" && len(notes) != 0 || c.note != "" && (len(notes) != 2 || notes[0] != c.note) {
			t.Errorf("%s: notes %q", c.model, notes)
		}
	}
}
