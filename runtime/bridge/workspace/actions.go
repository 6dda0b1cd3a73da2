package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// action is one entry of the allowlist: a read any key may run, or a change that needs changes
// allowed. Each runs through the records service, so it is checked, ledgered with the key as actor,
// announced, and can be undone.
type action struct {
	name, group, desc string
	write             bool
	shape             any // its type is the input's JSON schema
	run               func(ctx context.Context, s *Service, c Caller, raw json.RawMessage) (any, error)
	schema            any // the input's JSON schema: from shape, or the assistant tool's own
	// tool is the assistant's own tool of this name, when it has one: it runs instead of run, with
	// its schema, its Prepare and its Undo group (assistant_actions.go).
	tool *tools.Tool
	// limit says which inputs a guard refuses, for ensemble_actions.
	limit string
}

// notOffered are the assistant's tools a key cannot run: they change how Ensemble behaves or start
// work, so they stay with the person.
var notOffered = map[string]string{
	"hub_update_settings": "Settings stay with the person in Ensemble.",
	"hub_choose_model":    "Model choice stays with the person in Ensemble.",
	"hub_edit_layout":     "Layouts stay with the person in Ensemble.",
	"hub_stop_activity":   "Stopping runs stays with the person in Ensemble.",
	"hub_assign_to_agent": "Assigning work to agents stays with the person in Ensemble.",
	"hub_run_workflow":    "Workflows stay with the person in Ensemble.",
	"hub_create_watcher":  "Watchers stay with the person in Ensemble.",
	"hub_cancel_watcher":  "Watchers stay with the person in Ensemble.",
	"hub_edit_file":       "A file's original cannot be edited from editors and agents; add a new file instead.",
	"hub_view_file":       "Read files with ensemble_get_file.",
	"hub_web_search":      "Web search is the assistant's own tool; the editor has its own.",
	"hub_read_web_page":   "Reading web pages is the assistant's own tool; the editor has its own.",
}

type idIn struct {
	ID string `json:"id" jsonschema:"the record's id or handle"`
}

type idsIn struct {
	IDs []string `json:"ids" jsonschema:"ids or handles, at most 100"`
}

type kindIDIn struct {
	Kind string `json:"kind" jsonschema:"task, project, person, repo or page"`
	ID   string `json:"id"`
}

type readIn struct {
	ID     string `json:"id"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

type listIn struct {
	Query  string `json:"query,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

type surfaceIn struct {
	Surface string `json:"surface" jsonschema:"today"`
}

// The shapes of the change inputs: what the schema shows. The inputs decode into records' own
// types, whose fields know whether they were given at all.
type taskShape struct {
	Title     string   `json:"title,omitempty"`
	Status    string   `json:"status,omitempty" jsonschema:"proposed, todo, in_progress, waiting_approval, blocked, done or dropped"`
	Priority  string   `json:"priority,omitempty" jsonschema:"none, low, medium, high or urgent"`
	Due       *string  `json:"due,omitempty" jsonschema:"YYYY-MM-DD, or null to clear"`
	Labels    []string `json:"labels,omitempty"`
	ProjectID *string  `json:"projectId,omitempty"`
	OwnerID   *string  `json:"ownerId,omitempty"`
	People    []string `json:"people,omitempty" jsonschema:"person ids"`
	RepoID    *string  `json:"repoId,omitempty"`
	Page      string   `json:"page,omitempty" jsonschema:"the task's Markdown page"`
}

type taskPatchShape struct {
	ID string `json:"id"`
	taskShape
}

type pageShape struct {
	Title    string  `json:"title,omitempty"`
	Body     string  `json:"body,omitempty" jsonschema:"Markdown; link people and records as [@Name](ensemble://person/<id>)"`
	ParentID *string `json:"parentId,omitempty"`
}

type pagePatchShape struct {
	ID string `json:"id"`
	pageShape
}

type personShape struct {
	Name         string `json:"name,omitempty"`
	Email        string `json:"email,omitempty"`
	Role         string `json:"role,omitempty"`
	Team         string `json:"team,omitempty"`
	Relationship string `json:"relationship,omitempty" jsonschema:"their relationship to the person"`
	Notes        string `json:"notes,omitempty"`
}

type personPatchShape struct {
	ID string `json:"id"`
	personShape
}

type repoShape struct {
	Name          string `json:"name,omitempty"`
	URL           string `json:"url,omitempty"`
	Path          string `json:"path,omitempty"`
	DefaultBranch string `json:"defaultBranch,omitempty"`
}

type repoPatchShape struct {
	ID string `json:"id"`
	repoShape
}

// strict decodes raw into T: no unknown fields, nothing after the value.
func strict[T any](raw json.RawMessage) (T, error) {
	var v T
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return v, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return v, errors.New("the input must be one JSON object")
	}
	return v, nil
}

func bare(id, kind string) string { return strings.TrimPrefix(id, "ensemble://"+kind+"/") }

type patch[In any] struct {
	ID     string
	Fields In
}

// UnmarshalJSON reads the id and leaves the rest to In, whose fields know whether they were given.
func (p *patch[In]) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if id, ok := m["id"]; ok {
		if err := json.Unmarshal(id, &p.ID); err != nil {
			return fmt.Errorf("id must be text")
		}
		delete(m, "id")
	}
	rest, _ := json.Marshal(m)
	d := json.NewDecoder(bytes.NewReader(rest))
	d.DisallowUnknownFields()
	return d.Decode(&p.Fields)
}

func collectionActions[T, In any](group, noun, plural string, c func(*records.Service) records.Collection[T, In], create, update any) []*action {
	return []*action{
		{name: "hub_create_" + noun, group: group, write: true, shape: create,
			desc: "Creates a " + noun + ".",
			run: func(ctx context.Context, s *Service, cl Caller, raw json.RawMessage) (any, error) {
				in, err := strict[In](raw)
				if err != nil {
					return nil, err
				}
				return c(s.rec).Create(ctx, cl.Actor, in)
			}},
		{name: "hub_update_" + noun, group: group, write: true, shape: update,
			desc: "Changes the fields given of a " + noun + "; fields left out stay as they are.",
			run: func(ctx context.Context, s *Service, cl Caller, raw json.RawMessage) (any, error) {
				in, err := strict[patch[In]](raw)
				if err != nil {
					return nil, err
				}
				return c(s.rec).Update(ctx, cl.Actor, bare(in.ID, noun), in.Fields)
			}},
		{name: "hub_delete_" + noun, group: group, write: true, shape: idIn{},
			desc: "Moves a " + noun + " to Trash; the person can restore it.",
			run: func(ctx context.Context, s *Service, cl Caller, raw json.RawMessage) (any, error) {
				in, err := strict[idIn](raw)
				if err != nil {
					return nil, err
				}
				return c(s.rec).Trash(ctx, cl.Actor, bare(in.ID, noun))
			}},
	}
}

func trashMany(kind string) func(ctx context.Context, s *Service, c Caller, raw json.RawMessage) (any, error) {
	return func(ctx context.Context, s *Service, c Caller, raw json.RawMessage) (any, error) {
		in, err := strict[idsIn](raw)
		if err != nil {
			return nil, err
		}
		if len(in.IDs) == 0 || len(in.IDs) > 100 {
			return nil, badRequest("Give 1 to 100 ids.")
		}
		_, err = s.rec.Batch(ctx, c.Actor, fmt.Sprintf("Moved %d %ss to Trash", len(in.IDs), kind), func(b *records.Batch) error {
			for _, id := range in.IDs {
				var err error
				switch kind {
				case "task":
					_, err = s.rec.Tasks().TrashIn(b, bare(id, kind))
				case "page":
					_, err = s.rec.Pages().TrashIn(b, bare(id, kind))
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		return map[string]any{"trashed": len(in.IDs)}, err
	}
}

func readAction(name, group, desc string, shape any, run func(ctx context.Context, s *Service, raw json.RawMessage) (any, error)) *action {
	return &action{name: name, group: group, desc: desc, shape: shape,
		run: func(ctx context.Context, s *Service, _ Caller, raw json.RawMessage) (any, error) {
			return run(ctx, s, raw)
		}}
}

func reader[In any](f func(s *Service, ctx context.Context, in In) (any, error)) func(ctx context.Context, s *Service, raw json.RawMessage) (any, error) {
	return func(ctx context.Context, s *Service, raw json.RawMessage) (any, error) {
		in, err := strict[In](raw)
		if err != nil {
			return nil, err
		}
		return f(s, ctx, in)
	}
}

// actionList is built on first use: building it compiles every schema, which start-up need not pay.
var actionList = sync.OnceValue(func() []*action {
	tasks := func(r *records.Service) records.Collection[records.Task, records.TaskInput] { return r.Tasks() }
	pages := func(r *records.Service) records.Collection[records.Page, records.PageInput] { return r.Pages() }
	people := func(r *records.Service) records.Collection[records.Person, records.PersonInput] { return r.People() }
	repos := func(r *records.Service) records.Collection[records.Repo, records.RepoInput] { return r.Repos() }
	list := []*action{
		readAction("hub_read_task_page", "tasks", "Reads a task's Markdown page in parts.", readIn{},
			reader(func(s *Service, ctx context.Context, in readIn) (any, error) {
				return s.Read(ctx, ReadInput{Kind: "task", ID: in.ID, Offset: in.Offset, Limit: in.Limit})
			})),
		readAction("hub_list_deliverables", "projects", "Lists deliverables (none are kept on this computer yet).", listIn{},
			reader(func(s *Service, ctx context.Context, in listIn) (any, error) { return s.Deliverables(ctx) })),
		readAction("hub_list_files", "files", "Lists files, newest first.", FilesInput{},
			reader(func(s *Service, ctx context.Context, in FilesInput) (any, error) { return s.Files(ctx, in) })),
		readAction("hub_item_context", "context", "One record and what it links to.", ContextInput{},
			reader(func(s *Service, ctx context.Context, in ContextInput) (any, error) { return s.Context(ctx, in) })),
		readAction("hub_read_surface", "context", "Reads a screen of Ensemble as data: today.", surfaceIn{},
			reader(func(s *Service, ctx context.Context, in surfaceIn) (any, error) {
				if in.Surface != "today" {
					return nil, badRequest("This Ensemble reads the today surface only; use surface=today.")
				}
				return s.Today(ctx)
			})),
		readAction("hub_list_approvals", "context", "Lists what waits on the person in Needs me, read only.", struct{}{},
			reader(func(s *Service, ctx context.Context, in struct{}) (any, error) { return s.Decisions(ctx) })),
		{name: "hub_delete_pages", group: "pages", write: true, shape: idsIn{}, desc: "Moves up to 100 pages to Trash in one change.", run: trashMany("page")},
		{name: "hub_delete_entity", group: "context", write: true, shape: kindIDIn{}, desc: "Moves a project, repository, person, page or task to Trash; refuses files.",
			run: func(ctx context.Context, s *Service, c Caller, raw json.RawMessage) (any, error) {
				in, err := strict[kindIDIn](raw)
				if err != nil {
					return nil, err
				}
				return s.trashKind(ctx, c, in)
			}},
		{name: "hub_restore_entity", group: "context", write: true, shape: kindIDIn{}, desc: "Restores a record from Trash.",
			run: func(ctx context.Context, s *Service, c Caller, raw json.RawMessage) (any, error) {
				in, err := strict[kindIDIn](raw)
				if err != nil {
					return nil, err
				}
				if in.Kind == "document" || in.Kind == "file" {
					return nil, forbidden("Files are restored in Ensemble, not from editors and agents.")
				}
				return s.rec.Restore(ctx, c.Actor, in.Kind, bare(in.ID, in.Kind))
			}},
	}
	// The assistant's own tools cover creating and changing tasks, pages and projects, creating
	// people and linking repositories (assistantActions); the bridge adds what it has not.
	list = append(list, collectionActions("tasks", "task", "tasks", tasks, taskShape{}, taskPatchShape{})[2]) // hub_delete_task
	list = append(list, collectionActions("pages", "page", "pages", pages, pageShape{}, pagePatchShape{})[2]) // hub_delete_page
	list = append(list, collectionActions("people", "person", "people", people, personShape{}, personPatchShape{})[1:]...)
	rp := collectionActions("people", "repo", "repos", repos, repoShape{}, repoPatchShape{})[1:]
	rp[1].name, rp[1].desc = "hub_unlink_repo", "Stops tracking a repository (to Trash)."
	list = append(list, rp...)
	for _, a := range list {
		s, err := jsonschema.ForType(reflectType(a.shape), &jsonschema.ForOptions{})
		if err != nil {
			panic(fmt.Sprintf("workspace: schema of %s: %v", a.name, err))
		}
		a.schema = s
	}
	for _, a := range list {
		if a.name == "hub_delete_entity" {
			a.limit = "Refuses kind document (files are deleted in Ensemble) and routines."
		}
		if a.name == "hub_restore_entity" {
			a.limit = "Refuses kind document (files are restored in Ensemble)."
		}
	}
	list = append(list, assistantActions(tools.HubTools())...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].group < list[j].group })
	return list
})

func (s *Service) trashKind(ctx context.Context, c Caller, in kindIDIn) (any, error) {
	id := bare(in.ID, in.Kind)
	switch in.Kind {
	case "document", "file":
		return nil, forbidden("Files cannot be deleted from editors and agents; delete it in Ensemble.")
	case "task":
		return s.rec.Tasks().Trash(ctx, c.Actor, id)
	case "project":
		return s.rec.Projects().Trash(ctx, c.Actor, id)
	case "person":
		return s.rec.People().Trash(ctx, c.Actor, id)
	case "repo":
		return s.rec.Repos().Trash(ctx, c.Actor, id)
	case "page":
		return s.rec.Pages().Trash(ctx, c.Actor, id)
	case "routine":
		return nil, forbidden("Routines cannot be deleted from editors and agents; delete it in Ensemble.")
	}
	return nil, badRequest("%q is not a kind Ensemble keeps; use task, project, person, repo or page.", in.Kind)
}

func (s *Service) pagesList(ctx context.Context, in listIn) (any, error) {
	all, err := s.rec.Pages().List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Card
	for _, p := range all {
		if matches(in.Query, p.Title) {
			out = append(out, card("page", p.ID, p.Title, ""))
		}
	}
	return paged("pages", nonNil(out), ListInput{Limit: in.Limit, Offset: in.Offset}), nil
}

func findAction(name string) *action {
	for _, a := range actionList() {
		if a.name == name {
			return a
		}
	}
	return nil
}

// ActionsInput narrows the listing to some names, which then come with their full schema.
type ActionsInput struct {
	Names []string `json:"names,omitempty"`
}

// Actions lists the actions this key may run, by group.
func (s *Service) Actions(ctx context.Context, c Caller, in ActionsInput) (map[string]any, error) {
	type entry struct {
		Name        string `json:"name"`
		Write       bool   `json:"write"`
		Allowed     bool   `json:"allowed"`
		Refusal     string `json:"refusal,omitempty"`
		Limit       string `json:"limit,omitempty"`
		Description string `json:"description"`
		InputSchema any    `json:"inputSchema,omitempty"`
	}
	groups := map[string][]entry{}
	var order []string
	for _, a := range actionList() {
		if len(in.Names) > 0 && !contains(in.Names, a.name) {
			continue
		}
		e := entry{Name: a.name, Write: a.write, Allowed: !a.write || c.CanWrite, Limit: a.limit, Description: a.desc}
		if !e.Allowed {
			e.Refusal = ErrReadOnly
		}
		if len(in.Names) > 0 {
			e.InputSchema = a.schema
		}
		if _, ok := groups[a.group]; !ok {
			order = append(order, a.group)
		}
		groups[a.group] = append(groups[a.group], e)
	}
	type group struct {
		Group   string  `json:"group"`
		Actions []entry `json:"actions"`
	}
	out := make([]group, 0, len(order))
	for _, g := range order {
		out = append(out, group{g, groups[g]})
	}
	var not []string
	for n, why := range notOffered {
		not = append(not, n+": "+why)
	}
	sort.Strings(not)
	for _, n := range in.Names {
		if findAction(n) == nil {
			if why, ok := notOffered[n]; ok {
				return nil, refuse(http.StatusNotFound, "%s is not offered to editors and agents: %s", n, why)
			}
			return nil, refuse(http.StatusNotFound, "There is no action %q; ensemble_actions lists them.", n)
		}
	}
	return map[string]any{"groups": out, "canWrite": c.CanWrite, "notOffered": not,
		"note": "Changes run at once, are recorded with this key's name, and can be undone in Ensemble."}, nil
}

// Act runs one action of the allowlist.
func (s *Service) Act(ctx context.Context, c Caller, name string, input json.RawMessage) (map[string]any, error) {
	a := findAction(name)
	if a == nil {
		if why, ok := notOffered[name]; ok {
			return nil, refuse(http.StatusNotFound, "%s is not offered to editors and agents: %s", name, why)
		}
		return nil, refuse(http.StatusNotFound, "There is no action %q; ensemble_actions lists them.", name)
	}
	if a.write {
		if err := c.mayWrite(); err != nil {
			return nil, err
		}
	}
	if a.tool != nil {
		return s.actWithTool(ctx, c, a, input)
	}
	res, err := a.run(ctx, s, c, input)
	if err != nil {
		if isRefusal(err) {
			return nil, err
		}
		if ctx.Err() == nil && isDecodeError(err) {
			return nil, &Refusal{Status: http.StatusBadRequest, Msg: fmt.Sprintf("The input of %s is not right (%v); it takes the inputSchema here.", name, err),
				Extra: map[string]any{"inputSchema": a.schema}}
		}
		return nil, err
	}
	out := map[string]any{"action": name, "result": res}
	if a.write {
		out["undoable"] = true
	}
	return out, nil
}

// isRefusal reports whether err already says, in a sentence, what the caller must change: a
// Refusal, input the records refuse, a record that is not there, or a move a task may not make.
func isRefusal(err error) bool {
	var re *Refusal
	var mv *records.MoveError
	k := problem.KindOf(err)
	return errors.As(err, &re) || k == problem.KindInvalid || k == problem.KindNotFound || errors.As(err, &mv)
}

func isDecodeError(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syn) || errors.As(err, &typ) || strings.HasPrefix(err.Error(), "json: ") ||
		strings.Contains(err.Error(), "must be") || strings.Contains(err.Error(), "unknown field")
}

func reflectType(v any) reflect.Type { return reflect.TypeOf(v) }
