package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// InvalidInputError is a tool input its schema refuses: one sentence per problem, each naming its field
// by its path (tasks[0].title), in words a model and a person both act on. The schema validator's
// own error names only the first problem, in terms of the schema ("validating /properties/…").
type InvalidInputError struct {
	Problems []string
}

func (e *InvalidInputError) Error() string { return strings.Join(e.Problems, " ") }

// inputProblems walks v against sc and says every problem it finds, in order.
func inputProblems(sc *jsonschema.Schema, v any) []string {
	var out []string
	walkInput(sc, v, "", &out)
	return out
}

// field names a value by its path for a sentence: "The field tasks[0].title", or "The input".
func field(path string) string {
	if path == "" {
		return "The input"
	}
	return "The field " + path
}

func walkInput(sc *jsonschema.Schema, v any, path string, out *[]string) {
	if sc == nil {
		return
	}
	say := func(format string, args ...any) { *out = append(*out, field(path)+" "+fmt.Sprintf(format, args...)) }
	if types := schemaTypes(sc); len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return isType(v, t) }) {
		say("must be %s, not %s.", orList(typeNames(types)), kindOf(v))
		return // what else the schema says is about a value of the right type
	}
	if len(sc.Enum) > 0 && !slices.ContainsFunc(sc.Enum, func(e any) bool { return sameJSON(e, v) }) {
		var opts []string
		for _, e := range sc.Enum {
			opts = append(opts, shown(e))
		}
		say("must be one of %s, not %s.", orList(opts), shown(v))
	}
	if sc.Const != nil && !sameJSON(*sc.Const, v) {
		say("must be %s, not %s.", shown(*sc.Const), shown(v))
	}
	switch x := v.(type) {
	case string:
		n := utf8.RuneCountInString(x)
		if sc.MinLength != nil && n < *sc.MinLength {
			if *sc.MinLength == 1 {
				say("is empty; give it some text.")
			} else {
				say("must be at least %s long (it is %d).", Plural(*sc.MinLength, "character"), n)
			}
		}
		if sc.MaxLength != nil && n > *sc.MaxLength {
			say("must be at most %s long (it is %d).", Plural(*sc.MaxLength, "character"), n)
		}
		if sc.Pattern != "" {
			if re, err := regexp.Compile(sc.Pattern); err == nil && !re.MatchString(x) {
				say("must match the pattern %s.", sc.Pattern)
			}
		}
	case float64:
		if sc.Minimum != nil && x < *sc.Minimum {
			say("must be %s or more (it is %s).", number(*sc.Minimum), number(x))
		}
		if sc.Maximum != nil && x > *sc.Maximum {
			say("must be %s or less (it is %s).", number(*sc.Maximum), number(x))
		}
		if sc.ExclusiveMinimum != nil && x <= *sc.ExclusiveMinimum {
			say("must be more than %s (it is %s).", number(*sc.ExclusiveMinimum), number(x))
		}
		if sc.ExclusiveMaximum != nil && x >= *sc.ExclusiveMaximum {
			say("must be less than %s (it is %s).", number(*sc.ExclusiveMaximum), number(x))
		}
	case []any:
		if sc.MinItems != nil && len(x) < *sc.MinItems {
			say("must have at least %s (it has %d).", Plural(*sc.MinItems, "item"), len(x))
		}
		if sc.MaxItems != nil && len(x) > *sc.MaxItems {
			say("must have at most %s (it has %d).", Plural(*sc.MaxItems, "item"), len(x))
		}
		for i, item := range x {
			walkInput(sc.Items, item, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case map[string]any:
		for _, r := range sc.Required {
			if _, ok := x[r]; !ok {
				*out = append(*out, field(join(path, r))+" is missing; it is required.")
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := sc.Properties[k]; ok {
				walkInput(p, x[k], join(path, k), out)
				continue
			}
			if closed(sc.AdditionalProperties) {
				known := make([]string, 0, len(sc.Properties))
				for n := range sc.Properties {
					known = append(known, n)
				}
				sort.Strings(known)
				of := "this tool's fields"
				if path != "" {
					of = "the fields of " + path
				}
				*out = append(*out, fmt.Sprintf("%s is not one of %s (%s).", field(join(path, k)), of, andList(known)))
				continue
			}
			walkInput(sc.AdditionalProperties, x[k], join(path, k), out)
		}
	}
	for _, group := range [][]*jsonschema.Schema{sc.AnyOf, sc.OneOf} {
		if len(group) == 0 {
			continue
		}
		if !slices.ContainsFunc(group, func(alt *jsonschema.Schema) bool { return len(inputProblems(alt, v)) == 0 }) {
			say("does not fit any of the forms it may take.")
		}
	}
	for _, all := range sc.AllOf {
		walkInput(all, v, path, out)
	}
}

// closed reports whether a schema refuses every value (additionalProperties: false).
func closed(sc *jsonschema.Schema) bool {
	return sc != nil && sc.Not != nil && sc.Not.Type == "" && len(sc.Not.Types) == 0 && len(sc.Not.Properties) == 0
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func schemaTypes(sc *jsonschema.Schema) []string {
	if sc.Type != "" {
		return []string{sc.Type}
	}
	return sc.Types
}

func isType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return true
}

func typeNames(types []string) []string {
	names := map[string]string{"string": "text", "number": "a number", "integer": "a whole number", "boolean": "true or false",
		"array": "a list", "object": "an object", "null": "null"}
	var out []string
	for _, t := range types {
		if n, ok := names[t]; ok {
			out = append(out, n)
		} else {
			out = append(out, t)
		}
	}
	return out
}

// kindOf says what a JSON value is, in the words typeNames uses.
func kindOf(v any) string {
	switch x := v.(type) {
	case string:
		return "text (" + shown(x) + ")"
	case float64:
		if x != math.Trunc(x) {
			return "a number with a fraction (" + number(x) + ")"
		}
		return "a number (" + number(x) + ")"
	case bool:
		return fmt.Sprintf("%v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// shown is a value as a sentence quotes it: text in quotes, shortened; anything else as JSON.
func shown(v any) string {
	if s, ok := v.(string); ok {
		return quoted(clip(s, 60))
	}
	b, _ := json.Marshal(v)
	return clip(string(b), 60)
}

func number(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%f", f), "0"), ".")
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// orList is "a", "a or b", "a, b or c"; andList the same with "and".
func orList(items []string) string  { return list(items, " or ") }
func andList(items []string) string { return list(items, " and ") }

func list(items []string, last string) string {
	switch len(items) {
	case 0:
		return "none"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}
