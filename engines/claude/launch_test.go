package claude

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

// TestArgsModelChoices: the model, its long window and the thinking level as
// claude takes them on its command line.
func TestArgsModelChoices(t *testing.T) {
	for _, c := range []struct {
		name string
		spec engines.Spec
		want []string // the tail after the fixed arguments
	}{
		{"agent default", engines.Spec{}, nil},
		{"model and effort", engines.Spec{Model: "claude-opus-4-8", Effort: "xhigh"}, []string{"--model", "claude-opus-4-8", "--effort", "xhigh"}},
		{"long window", engines.Spec{Model: "claude-sonnet-4-6", Context: engines.ContextLong}, []string{"--model", "claude-sonnet-4-6[1m]"}},
		{"long window named already", engines.Spec{Model: "sonnet[1M]", Context: engines.ContextLong}, []string{"--model", "sonnet[1M]"}},
		{"long window without a model", engines.Spec{Context: engines.ContextLong}, nil},
		{"standard window", engines.Spec{Model: "claude-sonnet-4-6"}, []string{"--model", "claude-sonnet-4-6"}},
		{"fast is a setting, not an argument", engines.Spec{Model: "opus", Fast: true}, []string{"--model", "opus"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := args(c.spec, "/run/settings.json", "/run/mcp.json")
			i := slices.Index(a, "/run/mcp.json")
			if got := a[i+1:]; !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestRunFilesFastMode: fast mode is Claude Code's fastMode setting, in the
// run's own settings file; off leaves the person's own setting alone.
func TestRunFilesFastMode(t *testing.T) {
	for _, c := range []struct {
		name string
		fast bool
		want any
	}{
		{"on", true, true},
		{"off", false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			settings, _, err := runFiles(t.TempDir(), engines.Spec{Fast: c.fast})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(settings)
			if err != nil {
				t.Fatal(err)
			}
			var s map[string]any
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			if got := s["fastMode"]; got != c.want {
				t.Errorf("fastMode %v, want %v", got, c.want)
			}
		})
	}
}

// TestCatalog: the table holds together: one default, levels in claude's
// order with the default among them, and a long window only beside a shorter
// standard one.
func TestCatalog(t *testing.T) {
	cat, ids := catalog()
	if len(cat) != len(ids) || len(cat) == 0 {
		t.Fatalf("%d models, %d ids", len(cat), len(ids))
	}
	defaults := 0
	for i, m := range cat {
		if m.ID != ids[i] || m.Vendor != "Anthropic" || m.Name == "" {
			t.Errorf("%s: id %q, vendor %q, name %q", m.ID, ids[i], m.Vendor, m.Name)
		}
		if m.Default {
			defaults++
		}
		if len(m.Efforts) > 0 && !slices.Contains(m.Efforts, m.DefaultEffort) {
			t.Errorf("%s: default level %q not among %v", m.ID, m.DefaultEffort, m.Efforts)
		}
		if len(m.Efforts) == 0 && m.DefaultEffort != "" {
			t.Errorf("%s: a default level without levels", m.ID)
		}
		last := -1
		for _, e := range m.Efforts {
			j := slices.Index(effortsAll, e)
			if j <= last {
				t.Errorf("%s: levels %v not in claude's order", m.ID, m.Efforts)
			}
			last = j
		}
		if m.LongContext != 0 && m.LongContext <= m.Context {
			t.Errorf("%s: long window %d not longer than %d", m.ID, m.LongContext, m.Context)
		}
		if strings.Contains(m.ID, "[") {
			t.Errorf("%s: the long window is a choice, not a model", m.ID)
		}
	}
	if defaults != 1 {
		t.Errorf("%d default models, want 1", defaults)
	}
	cat[0].Efforts[0] = "changed"
	if effortsAll[0] != "low" {
		t.Error("a Detection's catalog shares the table's levels")
	}
}
