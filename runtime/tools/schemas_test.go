package tools

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

var updateSchemas = flag.Bool("update-schemas", false, "rewrite testdata/tool_schemas.json from HubTools()")

// goldenTool is a tool as the model is offered it: its description (the model's prompt, byte for
// byte) and its input schema.
type goldenTool struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// TestToolSchemasGolden pins what every Hub tool offers the model, so that changing how a tool is
// declared (a raw schema, a typed input) cannot change its description or its schema unnoticed.
// Schemas compare as parsed JSON: key order aside, and "required" and "type" lists as sets, as
// JSON Schema reads them. Run with -update-schemas to rewrite the golden deliberately.
func TestToolSchemasGolden(t *testing.T) {
	reg := HubTools()
	got := map[string]goldenTool{}
	for _, n := range reg.Names() {
		tool := reg.Get(n)
		got[n] = goldenTool{Description: tool.Description, Schema: tool.Schema}
	}
	path := filepath.Join("testdata", "tool_schemas.json")
	if *updateSchemas {
		out := map[string]any{}
		for n, g := range got {
			var s any
			if err := json.Unmarshal(g.Schema, &s); err != nil {
				t.Fatalf("%s: schema: %v", n, err)
			}
			out[n] = map[string]any{"description": g.Description, "schema": s}
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]goldenTool
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			t.Errorf("%s: in the golden but no longer registered", n)
		}
	}
	for n, g := range got {
		w, ok := want[n]
		if !ok {
			t.Errorf("%s: registered but not in the golden (run with -update-schemas)", n)
			continue
		}
		if g.Description != w.Description {
			t.Errorf("%s: description changed:\n got %q\nwant %q", n, g.Description, w.Description)
		}
		gs, ws := normalSchema(t, n, g.Schema), normalSchema(t, n, w.Schema)
		if !reflect.DeepEqual(gs, ws) {
			gb, _ := json.MarshalIndent(gs, "", " ")
			wb, _ := json.MarshalIndent(ws, "", " ")
			t.Errorf("%s: schema changed:\n got %s\nwant %s", n, gb, wb)
		}
	}
}

// normalSchema parses a schema and sorts its "required" and "type" lists, whose order JSON Schema
// does not read.
func normalSchema(t *testing.T, name string, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: schema is not JSON: %v", name, err)
	}
	return sortSets(v)
}

func sortSets(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if list, ok := e.([]any); ok && (k == "required" || k == "type") && allStrings(list) {
				s := make([]string, len(list))
				for i, item := range list {
					s[i] = item.(string)
				}
				slices.Sort(s)
				sorted := make([]any, len(s))
				for i, item := range s {
					sorted[i] = item
				}
				x[k] = sorted
				continue
			}
			x[k] = sortSets(e)
		}
	case []any:
		for i, e := range x {
			x[i] = sortSets(e)
		}
	}
	return v
}

func allStrings(list []any) bool {
	for _, e := range list {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}
