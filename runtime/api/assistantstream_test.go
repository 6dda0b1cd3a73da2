package api

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/docs"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// TestTurnStreamDoc checks that docs/assistant-turn.md names every kind of event the turn stream
// sends with a heading of its own, every field of each event's data (and of the rows, replies and
// records inside it), and every kind of error; and that it documents no kind the stream does not
// send.
func TestTurnStreamDoc(t *testing.T) {
	b, err := docs.Files.ReadFile("assistant-turn.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, kind := range append(slices.Clone(assistant.EventKinds), turnEventError) {
		data, ok := turnEvents[kind]
		if !ok {
			t.Errorf("the stream sends %q with no data type in turnEvents", kind)
			continue
		}
		if docSection(doc, kind) == "" {
			t.Errorf("docs/assistant-turn.md has no section \"### `%s`\"", kind)
			continue
		}
		for _, f := range jsonFields(reflect.TypeOf(data)) {
			// A tool row and a record are described once, in the sections of their own events.
			home := kind
			switch f.owner {
			case reflect.TypeOf(assistant.ToolRow{}):
				home = assistant.EventTool
			case reflect.TypeOf(tools.Ref{}):
				home = assistant.EventRefs
			}
			section := docSection(doc, home)
			if !strings.Contains(section, "`"+f.name+"`") && !strings.Contains(section, f.name+",") && !strings.Contains(section, f.name+"}") {
				t.Errorf("the section on %q does not name the field %s of %s", home, f.name, f.owner.Name())
			}
		}
	}
	for kind := range turnEvents {
		if !slices.Contains(assistant.EventKinds, kind) && kind != turnEventError {
			t.Errorf("turnEvents has %q, which the assistant does not send", kind)
		}
	}
	for _, m := range regexp.MustCompile("(?m)^### `([a-z]+)`").FindAllStringSubmatch(doc, -1) {
		if _, ok := turnEvents[m[1]]; !ok {
			t.Errorf("docs/assistant-turn.md documents an event %q the stream does not send", m[1])
		}
	}
	errs := docSection(doc, turnEventError)
	for _, k := range turnErrorKinds {
		if !strings.Contains(errs, "| `"+k+"` |") {
			t.Errorf("the section on error does not describe the kind %q", k)
		}
	}
	if !strings.Contains(doc, ": keepalive") {
		t.Error("docs/assistant-turn.md does not say comment lines come")
	}
}

// docSection is the text of the "### `kind`" section, up to the next heading.
func docSection(doc, kind string) string {
	_, after, ok := strings.Cut(doc, "### `"+kind+"`")
	if !ok {
		return ""
	}
	if i := strings.Index(after, "\n#"); i >= 0 {
		after = after[:i]
	}
	return after
}

type jsonField struct {
	name  string
	owner reflect.Type
}

// jsonFields are the JSON names of t's fields and of the structs it holds (a list's or a
// pointer's element), depth first: what a client reads from an event's data.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			out = append(out, jsonField{name, t})
			walk(f.Type)
		}
	}
	walk(t)
	return out
}
