package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
)

// A typed tool declares its input once, as a Go struct, and both its schema and its decoding come
// from it, as the bridge's actions do (bridge/workspace/actions.go): a hand-written schema beside a
// hand-written struct drifts (a field renamed in one, an enum the struct never checks).
//
// The struct's fields say, with jsonschema-go's For:
//   - `json:"name"` the property's name; without omitempty (or omitzero) it is required;
//   - `jsonschema:"…"` its description, which the model reads as its prompt.
//
// and with a `check:"…"` tag, read here, what For cannot say: a comma-separated list of
//
//	minLength=N maxLength=N minimum=N maximum=N minItems=N maxItems=N
//	enum=a|b|c         the values allowed; enum=@name for one of enumLists (the records' own lists)
//	type=object        the JSON type, for a json.RawMessage field (any value otherwise)
//	null               null is allowed too (a pointer that clears a field)
//	pattern=RE         a regular expression, which takes the rest of the tag
//
// each prefixed with "items." to apply to a list's items instead. A pointer or a slice does not
// accept null unless the tag says so: For would let null through where the tools never meant to.
// A records.Opt[T] field has T's schema, so records' input types can decode a tool's input.

// enumLists are the lists a check tag names with enum=@name: the records' own, so a tool's enum
// cannot drift from what records accepts.
var enumLists = map[string]func() []string{
	"taskStatus": func() []string {
		out := make([]string, len(records.Statuses))
		for i, s := range records.Statuses {
			out[i] = string(s)
		}
		return out
	},
	"priority":      func() []string { return records.Priorities },
	"projectStatus": func() []string { return records.ProjectStatuses },
	"searchKind":    func() []string { return records.SearchKinds },
}

// Typed is a tool's funcs over its decoded input In; typedTool derives the schema from In. The
// input they get has passed the schema, so they need not check what it says.
type Typed[In any] struct {
	Run     func(ctx context.Context, tc *ToolContext, in In) (Result, error)
	Write   func(ctx context.Context, tc *ToolContext, b *records.Batch, in In) (Result, error)
	Preview func(ctx context.Context, tc *ToolContext, in In) (string, error)
	Outside func(ctx context.Context, tc *ToolContext, in In, claim func(tx *ledger.Tx, res Result) error) (Result, error)
	// Prepare returns the fields of the input it fixes (a task named by title becomes its id); the
	// rest stays as the model wrote it. A tool may instead set Tool.Prepare over the raw input.
	Prepare func(ctx context.Context, tc *ToolContext, in In) (map[string]any, error)
}

// Define is typedTool for the tools declared outside this package (a node's own): t with its
// Schema derived from In and its funcs decoding In.
func Define[In any](t Tool, f Typed[In]) Tool { return typedTool(t, f) }

// typedTool is t with its Schema derived from In and its funcs decoding In. A type For cannot
// derive, or a check tag it does not read, is a programming error: it panics, as HubTools does
// for a tool it cannot register.
func typedTool[In any](t Tool, f Typed[In]) Tool {
	t.Schema = mustSchema(reflect.TypeFor[In]())
	return withTyped(t, f)
}

// shapedTool is typedTool for an input that decodes into another type than the one its schema
// comes from: a records input type, whose fields know whether they were given, described by Shape,
// a struct beside the tool with the same JSON fields and their checks and descriptions. The two
// are held together by checkShape, at declaration; own names the fields of Shape the tool reads
// itself (an update's id).
func shapedTool[Shape, In any](t Tool, f Typed[In], own ...string) Tool {
	if err := checkShape(reflect.TypeFor[Shape](), decodedFields(reflect.TypeFor[In]()), own...); err != nil {
		panic(fmt.Sprintf("tools: tool %s: %v", t.Name, err))
	}
	t.Schema = mustSchema(reflect.TypeFor[Shape]())
	return withTyped(t, f)
}

// fielder is an input that decodes its fields into another type it holds (idAnd).
type fielder interface{ fields() reflect.Type }

// decodedFields is the type whose JSON fields t decodes.
func decodedFields(t reflect.Type) reflect.Type {
	if t.Implements(reflect.TypeFor[fielder]()) {
		return reflect.Zero(t).Interface().(fielder).fields()
	}
	return t
}

// idAnd is an update's input: the id of the record it changes, and the fields it changes, which
// In (a records input type) decodes from the same object.
type idAnd[In any] struct {
	ID     string
	Fields In
}

func (idAnd[In]) fields() reflect.Type { return reflect.TypeFor[In]() }

func (x *idAnd[In]) UnmarshalJSON(b []byte) error {
	var id struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &id); err != nil {
		return err
	}
	x.ID = id.ID
	return json.Unmarshal(b, &x.Fields)
}

// withTyped sets t's funcs from f's, each decoding In.
func withTyped[In any](t Tool, f Typed[In]) Tool {
	if f.Run != nil {
		t.Run = typedRun(f.Run)
	}
	if f.Write != nil {
		t.Write = typedWrite(f.Write)
	}
	if f.Preview != nil {
		t.Preview = typedPreview(f.Preview)
	}
	if f.Outside != nil {
		t.Outside = typedOutside(f.Outside)
	}
	if f.Prepare != nil {
		if t.Prepare != nil {
			panic(fmt.Sprintf("tools: tool %s has a raw and a typed Prepare", t.Name))
		}
		t.Prepare = typedPrepare(f.Prepare)
	}
	return t
}

// decodeInput decodes a tool's input, already checked against its schema; no input is {}.
func decodeInput[In any](raw json.RawMessage) (In, error) {
	var in In
	if len(raw) == 0 {
		return in, nil
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("tools: decode tool input: %w", err)
	}
	return in, nil
}

func typedRun[In any](f func(context.Context, *ToolContext, In) (Result, error)) func(context.Context, *ToolContext, json.RawMessage) (Result, error) {
	return func(ctx context.Context, tc *ToolContext, raw json.RawMessage) (Result, error) {
		in, err := decodeInput[In](raw)
		if err != nil {
			return Result{}, err
		}
		return f(ctx, tc, in)
	}
}

func typedWrite[In any](f func(context.Context, *ToolContext, *records.Batch, In) (Result, error)) func(context.Context, *ToolContext, *records.Batch, json.RawMessage) (Result, error) {
	return func(ctx context.Context, tc *ToolContext, b *records.Batch, raw json.RawMessage) (Result, error) {
		in, err := decodeInput[In](raw)
		if err != nil {
			return Result{}, err
		}
		return f(ctx, tc, b, in)
	}
}

func typedPreview[In any](f func(context.Context, *ToolContext, In) (string, error)) func(context.Context, *ToolContext, json.RawMessage) (string, error) {
	return func(ctx context.Context, tc *ToolContext, raw json.RawMessage) (string, error) {
		in, err := decodeInput[In](raw)
		if err != nil {
			return "", err
		}
		return f(ctx, tc, in)
	}
}

func typedOutside[In any](f func(context.Context, *ToolContext, In, func(*ledger.Tx, Result) error) (Result, error)) func(context.Context, *ToolContext, json.RawMessage, func(*ledger.Tx, Result) error) (Result, error) {
	return func(ctx context.Context, tc *ToolContext, raw json.RawMessage, claim func(*ledger.Tx, Result) error) (Result, error) {
		in, err := decodeInput[In](raw)
		if err != nil {
			return Result{}, err
		}
		return f(ctx, tc, in, claim)
	}
}

// typedPrepare sets the fields f fixes on the raw input, in a stable order, keeping the rest as
// written, so a second Prepare of its own answer changes nothing.
func typedPrepare[In any](f func(context.Context, *ToolContext, In) (map[string]any, error)) func(context.Context, *ToolContext, json.RawMessage) (json.RawMessage, error) {
	return func(ctx context.Context, tc *ToolContext, raw json.RawMessage) (json.RawMessage, error) {
		in, err := decodeInput[In](raw)
		if err != nil {
			return nil, err
		}
		fixes, err := f(ctx, tc, in)
		if err != nil {
			return nil, err
		}
		if len(raw) == 0 {
			raw = json.RawMessage("{}")
		}
		keys := make([]string, 0, len(fixes))
		for k := range fixes {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if raw, err = withField(raw, k, fixes[k]); err != nil {
				return nil, err
			}
		}
		return raw, nil
	}
}

func mustSchema(t reflect.Type) json.RawMessage {
	b, err := schemaFor(t)
	if err != nil {
		panic(err)
	}
	return b
}

// schemaFor derives the input schema of t, a struct, applying its check tags.
func schemaFor(t reflect.Type) (json.RawMessage, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tools: a tool's input is a struct, not %s", t)
	}
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}}
	if err := optSchemas(t, opts.TypeSchemas, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	s, err := jsonschema.ForType(t, opts)
	if err != nil {
		return nil, fmt.Errorf("tools: schema of %s: %w", t, err)
	}
	if err := applyChecks(t, s); err != nil {
		return nil, fmt.Errorf("tools: schema of %s: %w", t, err)
	}
	return json.Marshal(s)
}

// isOpt reports whether t is a records.Opt[T], and T.
func isOpt(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[records.Opt[string]]().PkgPath() ||
		!strings.HasPrefix(t.Name(), "Opt[") {
		return nil, false
	}
	v, ok := t.FieldByName("V")
	return v.Type, ok
}

// optSchemas maps every records.Opt[T] reachable from t to T's schema.
func optSchemas(t reflect.Type, into map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if v, ok := isOpt(t); ok {
		s, err := jsonschema.ForType(v, &jsonschema.ForOptions{TypeSchemas: into})
		if err != nil {
			return fmt.Errorf("tools: schema of %s: %w", t, err)
		}
		into[t] = s
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return optSchemas(t.Elem(), into, seen)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if err := optSchemas(f.Type, into, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyChecks walks t beside its derived schema s: it drops the null For allows for pointers and
// slices, and applies each field's check tag.
func applyChecks(t reflect.Type, s *jsonschema.Schema) error {
	dropNull(s)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v, ok := isOpt(t); ok {
		return applyChecks(v, s)
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return applyChecks(t.Elem(), s.Items)
		}
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || f.Anonymous {
				if tag := f.Tag.Get("check"); tag != "" {
					return fmt.Errorf("field %s: a check tag on a field without a JSON name", f.Name)
				}
				continue
			}
			p := s.Properties[name]
			if p == nil {
				continue
			}
			if err := applyChecks(f.Type, p); err != nil {
				return fmt.Errorf("field %s: %w", name, err)
			}
			if err := applyCheckTag(p, f.Tag.Get("check")); err != nil {
				return fmt.Errorf("field %s: %w", name, err)
			}
		}
	}
	return nil
}

// dropNull makes a schema For made nullable (["null","string"]) take its one type again.
func dropNull(s *jsonschema.Schema) {
	if len(s.Types) == 0 || !slices.Contains(s.Types, "null") {
		return
	}
	rest := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
	if len(rest) == 1 {
		s.Type, s.Types = rest[0], nil
		return
	}
	s.Types = rest
}

// applyCheckTag applies one field's check tag to its schema.
func applyCheckTag(s *jsonschema.Schema, tag string) error {
	for tag != "" {
		var item string
		if strings.HasPrefix(tag, "pattern=") || strings.HasPrefix(tag, "items.pattern=") {
			item, tag = tag, "" // a pattern may hold commas: it takes the rest
		} else {
			item, tag, _ = strings.Cut(tag, ",")
		}
		item = strings.TrimSpace(item)
		target := s
		if rest, ok := strings.CutPrefix(item, "items."); ok {
			if s.Items == nil {
				return fmt.Errorf("check %q on a field that is not a list", item)
			}
			target, item = s.Items, rest
		}
		if err := applyCheck(target, item); err != nil {
			return err
		}
	}
	return nil
}

func applyCheck(s *jsonschema.Schema, item string) error {
	key, val, _ := strings.Cut(item, "=")
	num := func() (float64, error) {
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return 0, fmt.Errorf("check %q: %s is not a number", item, val)
		}
		return f, nil
	}
	count := func(dst **int) error {
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return fmt.Errorf("check %q: %s is not a count", item, val)
		}
		*dst = &n
		return nil
	}
	switch key {
	case "minLength":
		return count(&s.MinLength)
	case "maxLength":
		return count(&s.MaxLength)
	case "minItems":
		return count(&s.MinItems)
	case "maxItems":
		return count(&s.MaxItems)
	case "minimum", "maximum":
		f, err := num()
		if err != nil {
			return err
		}
		if key == "minimum" {
			s.Minimum = &f
		} else {
			s.Maximum = &f
		}
	case "pattern":
		s.Pattern = val
	case "type":
		s.Type, s.Types = val, nil
	case "null":
		if s.Type != "" {
			s.Types, s.Type = []string{s.Type, "null"}, ""
		} else if len(s.Types) > 0 && !slices.Contains(s.Types, "null") {
			s.Types = append(s.Types, "null")
		}
	case "enum":
		values := strings.Split(val, "|")
		if name, ok := strings.CutPrefix(val, "@"); ok {
			list, known := enumLists[name]
			if !known {
				return fmt.Errorf("check %q: no list named %s", item, name)
			}
			values = list()
		}
		s.Enum = make([]any, len(values))
		for i, v := range values {
			s.Enum[i] = v
		}
	default:
		return fmt.Errorf("check %q is not one this package reads", item)
	}
	return nil
}

// checkShape says where a tool whose schema comes from shape but whose input decodes into in (a
// records input type, whose fields know whether they were given) would drift: a property of shape
// that in has not, or has with another type. Names in own are the tool's own (an update's id).
func checkShape(shape, in reflect.Type, own ...string) error {
	fields := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(in) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" && !f.Anonymous {
			fields[name] = f.Type
		}
	}
	for _, f := range reflect.VisibleFields(shape) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || f.Anonymous || slices.Contains(own, name) {
			continue
		}
		got, ok := fields[name]
		if !ok {
			return fmt.Errorf("tools: %s has %q, which %s does not decode", shape, name, in)
		}
		if v, isO := isOpt(got); isO {
			got = v
		}
		if got != f.Type {
			return fmt.Errorf("tools: %s's %q is %s, but %s decodes it as %s", shape, name, f.Type, in, got)
		}
	}
	return nil
}
