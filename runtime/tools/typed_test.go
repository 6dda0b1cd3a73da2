package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/records"
)

type typedItem struct {
	Old string `json:"old" check:"minLength=1"`
	New string `json:"new,omitempty"`
}

type typedSample struct {
	ID     string              `json:"id" check:"minLength=1,maxLength=10" jsonschema:"the id, or a title"`
	Status string              `json:"status,omitempty" check:"enum=@taskStatus"`
	Kind   string              `json:"kind,omitempty" check:"enum=a|b"`
	Tags   []string            `json:"tags,omitempty" check:"maxItems=3,items.minLength=1"`
	Due    *string             `json:"due,omitempty" check:"null"`
	Offset *int                `json:"offset,omitempty" check:"minimum=0"`
	Code   string              `json:"code,omitempty" check:"pattern=^[a-z]{1,3},x$"`
	Items  []typedItem         `json:"items,omitempty"`
	Input  json.RawMessage     `json:"input,omitempty" check:"type=object"`
	Name   records.Opt[string] `json:"name,omitzero" check:"maxLength=5"`
}

// TestSchemaFor: a typed input's schema comes from its fields, their check tags applied, a
// pointer or a list accepting null only where the tag says so, and records.Opt[T] as T.
func TestSchemaFor(t *testing.T) {
	raw, err := schemaFor(reflect.TypeFor[typedSample]())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","additionalProperties":false,"required":["id"],"properties":{
		"id":{"type":"string","minLength":1,"maxLength":10,"description":"the id, or a title"},
		"status":{"type":"string","enum":["proposed","todo","in_progress","waiting_approval","blocked","done","dropped"]},
		"kind":{"type":"string","enum":["a","b"]},
		"tags":{"type":"array","maxItems":3,"items":{"type":"string","minLength":1}},
		"due":{"type":["string","null"]},
		"offset":{"type":"integer","minimum":0},
		"code":{"type":"string","pattern":"^[a-z]{1,3},x$"},
		"items":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["old"],"properties":{
			"old":{"type":"string","minLength":1},"new":{"type":"string"}}}},
		"input":{"type":"object"},
		"name":{"type":"string","maxLength":5}}}`
	if g, w := normalSchema(t, "sample", raw), normalSchema(t, "want", json.RawMessage(want)); !reflect.DeepEqual(g, w) {
		t.Errorf("schema:\n got %s\nwant %s", raw, want)
	}
}

// TestSchemaForRefuses: a check this package does not read, or a list it does not know, is an
// error at declaration, not a schema that silently says less.
func TestSchemaForRefuses(t *testing.T) {
	type unknownCheck struct {
		A string `json:"a" check:"minlength=1"`
	}
	type unknownList struct {
		A string `json:"a" check:"enum=@colours"`
	}
	type itemsOfText struct {
		A string `json:"a" check:"items.minLength=1"`
	}
	for _, c := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[unknownCheck](), `check "minlength=1" is not one`},
		{reflect.TypeFor[unknownList](), "no list named colours"},
		{reflect.TypeFor[itemsOfText](), "not a list"},
		{reflect.TypeFor[string](), "is a struct"},
	} {
		if _, err := schemaFor(c.typ); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.typ, err, c.want)
		}
	}
}

// TestCheckShape: a schema shape whose field a records input type does not decode, or decodes as
// another type, is drift.
func TestCheckShape(t *testing.T) {
	type good struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	type renamed struct {
		Title string `json:"title"`
	}
	type retyped struct {
		Name int `json:"name"`
	}
	in := reflect.TypeFor[records.ProjectInput]()
	if err := checkShape(reflect.TypeFor[good](), in, "id"); err != nil {
		t.Errorf("good: %v", err)
	}
	if err := checkShape(reflect.TypeFor[good](), in); err == nil {
		t.Error("an id records does not decode was not drift")
	}
	if err := checkShape(reflect.TypeFor[renamed](), in); err == nil {
		t.Error("a renamed field was not drift")
	}
	if err := checkShape(reflect.TypeFor[retyped](), in); err == nil {
		t.Error("a retyped field was not drift")
	}
}

// TestTypedPrepare: a typed Prepare's fixes land on the input as written, and its own answer
// comes back unchanged.
func TestTypedPrepare(t *testing.T) {
	type in struct {
		ID   string `json:"id"`
		Note string `json:"note,omitempty"`
	}
	prep := typedPrepare(func(_ context.Context, _ *ToolContext, x in) (map[string]any, error) {
		return map[string]any{"id": strings.ToUpper(x.ID)}, nil
	})
	out, err := prep(context.Background(), nil, json.RawMessage(`{"id":"abc","note":"n"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"id":"ABC","note":"n"}` {
		t.Errorf("prepared %s", out)
	}
	again, err := prep(context.Background(), nil, out)
	if err != nil || string(again) != string(out) {
		t.Errorf("prepared again %s, %v", again, err)
	}
}

// TestShapedTool: a record tool's schema comes from its shape and its input decodes into records'
// type; a shape that drifted from that type stops the tool at declaration.
func TestShapedTool(t *testing.T) {
	type shape struct {
		ID   string `json:"id"`
		Name string `json:"name,omitempty" check:"maxLength=9"`
	}
	var got idAnd[records.ProjectInput]
	tool := shapedTool[shape](Tool{Name: "t"}, Typed[idAnd[records.ProjectInput]]{
		Run: func(_ context.Context, _ *ToolContext, in idAnd[records.ProjectInput]) (Result, error) {
			got = in
			return Result{}, nil
		},
	}, "id")
	if !strings.Contains(string(tool.Schema), `"maxLength":9`) {
		t.Errorf("schema %s is not the shape's", tool.Schema)
	}
	if _, err := tool.Run(context.Background(), nil, json.RawMessage(`{"id":"prj_1","name":"Q3"}`)); err != nil {
		t.Fatal(err)
	}
	if got.ID != "prj_1" || got.Fields.Name != records.Some("Q3") || got.Fields.Status.Set {
		t.Errorf("decoded %+v", got)
	}

	type drifted struct {
		Title string `json:"title"`
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `"title"`) {
			t.Errorf("a drifted shape was declared (%v)", r)
		}
	}()
	shapedTool[drifted](Tool{Name: "t"}, Typed[records.ProjectInput]{})
}
