package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/records"
)

// recordKind is what the list, create and update tools of projects, people and repositories need
// to know of one kind, so the three share one way of checking, previewing and summarising.
// records' input types decode the tools' input directly: their fields know whether they were given.
type recordKind[T, In any] struct {
	kind     string // as refs and links name it: "repo"
	noun     string // as a person reads it: "repository"
	area     string // its tools' Area: "repos"
	listName string
	coll     func(*records.Service) records.Collection[T, In]
	id       func(T) string
	title    func(T) string
	deleted  func(T) bool
	row      func(T) any
	// name is the name an input gives, if it gives one.
	name func(In) (string, bool)
	// changes says what an update changes, as a plan ("set its status to paused") and as done.
	changes func(In) (plans, done []string)
}

func (k recordKind[T, In]) ref(v T) Ref { return Ref{Kind: k.kind, ID: k.id(v), Title: k.title(v)} }

// live finds the record ref names (find), refusing one in Trash, the only kind a write may not
// change.
func (k recordKind[T, In]) live(ctx context.Context, tc *ToolContext, ref string) (T, error) {
	v, err := k.find(ctx, tc, ref)
	if err == nil && k.deleted(v) {
		return v, fmt.Errorf("The %s %s is in Trash; restore it first to change it.", k.noun, quoted(k.title(v)))
	}
	return v, err
}

// find finds the record ref names: by its id or ensemble:// link (also in Trash), else by its
// exact title, case aside, among those not in Trash, since the model often knows a record only by
// the title the person said. Several with that title is a question back, not a guess.
func (k recordKind[T, In]) find(ctx context.Context, tc *ToolContext, ref string) (T, error) {
	coll := k.coll(tc.Records)
	v, err := coll.Get(ctx, bareID(ref, k.kind))
	if err == nil || !records.IsNotFound(err) {
		return v, err
	}
	all, err := coll.List(ctx)
	if err != nil {
		return v, fmt.Errorf("tools: find %s by title: %w", k.noun, err)
	}
	var found []T
	for _, x := range all {
		if strings.EqualFold(strings.TrimSpace(k.title(x)), strings.TrimSpace(ref)) {
			found = append(found, x)
		}
	}
	switch len(found) {
	case 0:
		return v, fmt.Errorf("There is no %s with that id or title (or it is in Trash); call %s to find it.", k.noun, k.listName)
	case 1:
		return found[0], nil
	}
	return v, fmt.Errorf("%d %ss are titled %s; call %s and name the one meant by its id.", len(found), k.noun, quoted(k.title(found[0])), k.listName)
}

// withField returns the JSON object raw with key set to v: Prepare's way of fixing what an input
// names (a title becomes an id) and leaving the rest as the model wrote it.
func withField(raw json.RawMessage, key string, v any) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m[key] = b
	return json.Marshal(m)
}

// prepareID is the Prepare of a tool that changes one record named by its "id" field: the field
// becomes the id of the live record it names.
func (k recordKind[T, In]) prepareID(ctx context.Context, tc *ToolContext, raw json.RawMessage) (json.RawMessage, error) {
	var in struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	v, err := k.live(ctx, tc, in.ID)
	if err != nil {
		return nil, err
	}
	return withField(raw, "id", k.id(v))
}

// listQuery is what every record list's input gives, beside the fields its kind filters by: the
// words the title contains and where the part to show starts.
type listQuery interface {
	words() string
	from() int
}

// listByNameIn is the input of a list that filters by name only (people, repositories).
type listByNameIn struct {
	Query  string `json:"query,omitempty" jsonschema:"words the name contains"`
	Offset int    `json:"offset,omitempty" check:"minimum=0"`
}

func (in listByNameIn) words() string { return in.Query }
func (in listByNameIn) from() int     { return in.Offset }

// listTool lists the kind's records not in Trash that match, cut at whole rows. Its input is L,
// from which its schema comes.
func listTool[T, In any, L listQuery](k recordKind[T, In], desc string, match func(T, L) bool) Tool {
	many := k.noun + "s"
	if k.noun == "person" {
		many = "people"
	}
	return typedTool(Tool{
		Name: k.listName, Description: desc,
		Area: k.area, Risk: RiskLow,
	}, Typed[L]{
		Run: func(ctx context.Context, tc *ToolContext, in L) (Result, error) {
			all, err := k.coll(tc.Records).List(ctx)
			if err != nil {
				return Result{}, err
			}
			var rows []any
			var titles []string
			for _, v := range all {
				if titleHas(k.title(v), in.words()) && match(v, in) {
					rows = append(rows, k.row(v))
					titles = append(titles, k.title(v))
				}
			}
			kept, note := fitList(rows, in.from(), k.listName, many)
			from := min(max(in.from(), 0), len(titles))
			summary := fmt.Sprintf("No %s found.", many)
			switch {
			case len(rows) == 1:
				summary = fmt.Sprintf("Found 1 %s: %s.", k.noun, titleList(titles))
			case len(kept) > 0:
				summary = fmt.Sprintf("Found %d %s: %s.", len(rows), many, titleList(titles[from:from+len(kept)]))
			case len(rows) > 0:
				summary = fmt.Sprintf("Found %d %s, none past offset %d.", len(rows), many, from)
			}
			return Result{Summary: summary, Data: listData(many, kept, len(rows), note)}, nil
		},
	})
}

// createTool adds one record of the kind. Its schema comes from Shape, its input decodes into the
// kind's records input type.
func createTool[Shape, T, In any](k recordKind[T, In], name, desc string) Tool {
	named := func(in In) (string, error) {
		n, _ := k.name(in)
		if n = strings.TrimSpace(n); n == "" { // as records would refuse it, so the preview does too
			return "", fmt.Errorf("The name cannot be empty.")
		}
		return n, nil
	}
	return shapedTool[Shape](Tool{
		Name: name, Description: desc,
		Area: k.area, Risk: RiskLow, Undoable: Undoable,
	}, Typed[In]{
		Preview: func(ctx context.Context, tc *ToolContext, in In) (string, error) {
			n, err := named(in)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Add %s %s.", k.noun, quoted(n)), nil
		},
		Write: func(ctx context.Context, tc *ToolContext, b *records.Batch, in In) (Result, error) {
			if _, err := named(in); err != nil {
				return Result{}, err
			}
			v, err := k.coll(tc.Records).CreateIn(b, in)
			if err != nil {
				return Result{}, err
			}
			return Result{Summary: fmt.Sprintf("Added %s %s.", k.noun, quoted(k.title(v))),
				Data: map[string]any{k.kind: k.row(v)}, Refs: []Ref{k.ref(v)}}, nil
		},
	})
}

// updateTool changes the fields given of one record of the kind. Its schema comes from Shape, its
// input decodes into the record's id and the kind's records input type.
func updateTool[Shape, T, In any](k recordKind[T, In], name, desc string) Tool {
	type update struct {
		cur         T
		in          In
		plans, done []string
	}
	read := func(ctx context.Context, tc *ToolContext, given idAnd[In]) (update, error) {
		in := given.Fields
		cur, err := k.coll(tc.Records).Get(ctx, bareID(given.ID, k.kind))
		if err != nil {
			return update{}, missing(err, k.noun, k.listName)
		}
		if k.deleted(cur) {
			return update{}, fmt.Errorf("The %s %s is in Trash; restore it first to change it.", k.noun, quoted(k.title(cur)))
		}
		plans, done := k.changes(in)
		if len(plans) == 0 {
			return update{}, fmt.Errorf("Nothing to change: give at least one field besides the id.")
		}
		return update{cur: cur, in: in, plans: plans, done: done}, nil
	}
	return shapedTool[Shape](Tool{
		Name: name, Description: desc,
		Area: k.area, Risk: RiskMedium, Undoable: Undoable, Prepare: k.prepareID,
	}, Typed[idAnd[In]]{
		Preview: func(ctx context.Context, tc *ToolContext, given idAnd[In]) (string, error) {
			u, err := read(ctx, tc, given)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Update %s %s: %s.", k.noun, quoted(k.title(u.cur)), strings.Join(u.plans, ", ")), nil
		},
		Write: func(ctx context.Context, tc *ToolContext, b *records.Batch, given idAnd[In]) (Result, error) {
			u, err := read(ctx, tc, given)
			if err != nil {
				return Result{}, err
			}
			v, err := k.coll(tc.Records).UpdateIn(b, k.id(u.cur), u.in)
			if err != nil {
				return Result{}, missing(err, k.noun, k.listName)
			}
			return Result{Summary: fmt.Sprintf("Updated %s %s: %s.", k.noun, quoted(k.title(u.cur)), strings.Join(u.done, ", ")),
				Data: map[string]any{k.kind: k.row(v)}, Refs: []Ref{k.ref(v)}}, nil
		},
	}, "id")
}

// fieldChanges describes the text fields an update sets: a name is a rename, a short field is
// set to its value, a long one (notes) is only said to change.
type fieldChange struct {
	label string
	opt   records.Opt[string]
	long  bool
}

func fieldChanges(fields ...fieldChange) (plans, done []string) {
	for _, f := range fields {
		if !f.opt.Set {
			continue
		}
		v := strings.TrimSpace(f.opt.V)
		switch {
		case f.label == "name":
			plans, done = append(plans, "rename it to "+quoted(v)), append(done, "renamed it to "+quoted(v))
		case v == "":
			plans, done = append(plans, "clear its "+f.label), append(done, "cleared its "+f.label)
		case f.long:
			plans, done = append(plans, "replace its "+f.label), append(done, "replaced its "+f.label)
		default:
			plans, done = append(plans, "set its "+f.label+" to "+quoted(clip(v, 80))), append(done, "set its "+f.label+" to "+quoted(clip(v, 80)))
		}
	}
	return plans, done
}
