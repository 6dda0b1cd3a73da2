package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// inputTool is a tool whose schema has every rule the walk reads.
func inputTool(t *testing.T) *Tool {
	t.Helper()
	reg := NewRegistry()
	err := reg.Register(Tool{Name: "t_check", Area: "tasks", Risk: RiskLow, Run: readSkillTool().Run, Schema: json.RawMessage(`{
		"type":"object","additionalProperties":false,"required":["title","items"],
		"properties":{
			"title":{"type":"string","minLength":1,"maxLength":10},
			"code":{"type":"string","pattern":"^[A-Z]{3}$"},
			"limit":{"type":"integer","minimum":1,"maximum":40},
			"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
			"status":{"type":"string","enum":["todo","done"]},
			"flag":{"type":"boolean"},
			"when":{"anyOf":[{"type":"string","pattern":"^\\d{4}-\\d\\d-\\d\\d$"},{"type":"null"}]},
			"items":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"object","additionalProperties":false,"required":["name"],
				"properties":{"name":{"type":"string","minLength":1},"size":{"type":"integer"}}}}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	return reg.Get("t_check")
}

func TestValidateSaysEveryProblem(t *testing.T) {
	tool := inputTool(t)
	for _, c := range []struct {
		name  string
		input string
		want  []string // every problem, in order; nil: valid
	}{
		{"valid", `{"title":"Brief","items":[{"name":"a"}]}`, nil},
		{"not JSON", `{"title":`, []string{"The input is not JSON (unexpected end of JSON input)."}},
		{"not an object", `["a"]`, []string{"The input must be an object, not a list."}},
		{"missing fields", `{}`, []string{
			"The field title is missing; it is required.", "The field items is missing; it is required."}},
		{"wrong types", `{"title":3,"items":"many","flag":"yes"}`, []string{
			"The field flag must be true or false, not text (“yes”).",
			"The field items must be a list, not text (“many”).",
			"The field title must be text, not a number (3)."}},
		{"a whole number", `{"title":"a","items":[{"name":"a"}],"limit":2.5}`, []string{
			"The field limit must be a whole number, not a number with a fraction (2.5)."}},
		{"bounds", `{"title":"far too long a title","items":[{"name":"a"},{"name":"b"},{"name":"c"}],"limit":0,"ratio":1}`, []string{
			"The field items must have at most 2 items (it has 3).",
			"The field limit must be 1 or more (it is 0).",
			"The field ratio must be less than 1 (it is 1).",
			"The field title must be at most 10 characters long (it is 20)."}},
		{"empty text and list", `{"title":"","items":[]}`, []string{
			"The field items must have at least 1 item (it has 0).",
			"The field title is empty; give it some text."}},
		{"enum, pattern, forms", `{"title":"a","items":[{"name":"a"}],"status":"later","code":"ab","when":"soon"}`, []string{
			"The field code must match the pattern ^[A-Z]{3}$.",
			"The field status must be one of “todo” or “done”, not “later”.",
			"The field when does not fit any of the forms it may take."}},
		{"nested, several at once", `{"title":"a","items":[{"size":1.5},{"name":"b","colour":"red"}],"extra":true}`, []string{
			"The field extra is not one of this tool's fields (code, flag, items, limit, ratio, status, title and when).",
			"The field items[0].name is missing; it is required.",
			"The field items[0].size must be a whole number, not a number with a fraction (1.5).",
			"The field items[1].colour is not one of the fields of items[1] (name and size)."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := tool.Validate(json.RawMessage(c.input))
			if c.want == nil {
				if err != nil {
					t.Fatalf("a valid input: %v", err)
				}
				return
			}
			var ie *InvalidInputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an *InvalidInputError", err)
			}
			if strings.Join(ie.Problems, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(ie.Problems, "\n"), strings.Join(c.want, "\n"))
			}
			for _, p := range ie.Problems {
				if strings.Contains(p, "validating") || strings.Contains(p, "/properties/") || strings.Contains(p, "jsonschema") {
					t.Errorf("a problem reads like the validator's trace: %q", p)
				}
			}
		})
	}
}

func TestValidatorWords(t *testing.T) {
	for in, want := range map[string]string{
		"validating root: validating /properties/a: not a multiple of 3": "not a multiple of 3",
		"not a multiple of 3": "not a multiple of 3",
		"validating root":     "validating root",
	} {
		if got := validatorWords(errors.New(in)); got != want {
			t.Errorf("validatorWords(%q) = %q, want %q", in, got, want)
		}
	}
}
