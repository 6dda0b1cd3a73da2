package codex

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

// TestCatalogOf reads model/list as codex 0.171 answered it
// (testdata/model_list.json, trimmed), and a second page.
func TestCatalogOf(t *testing.T) {
	b, err := os.ReadFile("testdata/model_list.json")
	if err != nil {
		t.Fatal(err)
	}
	var first modelList
	if err := json.Unmarshal(b, &first); err != nil {
		t.Fatal(err)
	}
	var second modelList
	if err := json.Unmarshal([]byte(`{"data":[{"id":"plain","displayName":"Plain","hidden":false,"isDefault":false,
		"defaultReasoningEffort":"medium","supportedReasoningEfforts":[]}],"nextCursor":null}`), &second); err != nil {
		t.Fatal(err)
	}
	all := []string{"low", "medium", "high", "xhigh", "max", "ultra"}
	for _, c := range []struct {
		name  string
		pages []modelList
		want  []engines.ModelInfo
	}{
		{"none", nil, nil},
		{"one page, hidden left out", []modelList{first}, []engines.ModelInfo{
			{ID: "gpt-6.2-sol", Name: "GPT-6.2-Sol", Vendor: "OpenAI", Description: "Fast, go-to model for coding and everyday work.", Default: true, Efforts: all, DefaultEffort: "low", Fast: true},
			{ID: "gpt-6-luna", Name: "GPT-6-Luna", Vendor: "OpenAI", Description: first.Data[1].Description, Efforts: all[:5], DefaultEffort: "medium", Fast: true},
			{ID: "gpt-5.5", Name: "GPT-5.5", Vendor: "OpenAI", Description: first.Data[3].Description, Efforts: all[:4], DefaultEffort: "medium", Fast: true},
		}},
		{"no levels, no fast tier", []modelList{second}, []engines.ModelInfo{{ID: "plain", Name: "Plain", Vendor: "OpenAI"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := catalogOf(c.pages); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestThreadParamsFast: fast mode is the fast service tier on the thread, on
// start and on resume; off sends none.
func TestThreadParamsFast(t *testing.T) {
	for _, c := range []struct {
		name string
		spec engines.Spec
		want any
	}{
		{"off", engines.Spec{Folder: "/w"}, nil},
		{"on", engines.Spec{Folder: "/w", Fast: true}, "priority"},
		{"on, resumed", engines.Spec{Folder: "/w", Fast: true, Resume: "01a2"}, "priority"},
		{"long window is not Codex's", engines.Spec{Folder: "/w", Context: engines.ContextLong}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := threadParams(c.spec)
			if got := p["serviceTier"]; got != c.want {
				t.Errorf("serviceTier %v, want %v", got, c.want)
			}
			if _, ok := turnParams("01a2", c.spec)["serviceTier"]; ok {
				t.Error("the turn sets a service tier too")
			}
		})
	}
}
