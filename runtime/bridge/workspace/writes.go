package workspace

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
)

// Caller is the key a request came with.
type Caller struct {
	Actor      ledger.Actor
	CanWrite   bool
	CanUseApps bool
}

// ErrReadOnly is the sentence for a write by a key without changes allowed.
const ErrReadOnly = "This key may only read: make a key with changes allowed (`ensemble keys create NAME --changes`) to let editors and agents change Ensemble."

func (c Caller) mayWrite() error {
	if !c.CanWrite {
		return forbidden("%s", ErrReadOnly)
	}
	return nil
}

// CreateTaskInput is a new task from an editor or agent.
type CreateTaskInput struct {
	Title       string   `json:"title"`
	Page        string   `json:"page,omitempty"`
	ProjectID   string   `json:"projectId,omitempty"`
	ProjectName string   `json:"projectName,omitempty"`
	Due         string   `json:"due,omitempty"`
	People      []string `json:"people,omitempty"` // names or ids
	Status      string   `json:"status,omitempty"` // proposed (default) or todo
	From        string   `json:"from,omitempty"`   // a handle it came from
}

// CreateTask adds a task, proposed unless todo is asked for.
func (s *Service) CreateTask(ctx context.Context, c Caller, in CreateTaskInput) (map[string]any, error) {
	if err := c.mayWrite(); err != nil {
		return nil, err
	}
	st := records.Proposed
	switch in.Status {
	case "", "proposed":
	case "todo":
		st = records.Todo
	default:
		return nil, badRequest("A new task's status is proposed (the default) or todo, not %q.", in.Status)
	}
	ti := records.TaskInput{Title: records.Some(in.Title), Status: records.Some(st)}
	if in.ProjectID != "" && in.ProjectName != "" {
		return nil, badRequest("Give projectId or projectName, not both.")
	}
	if in.ProjectID != "" {
		id := strings.TrimPrefix(in.ProjectID, "ensemble://project/")
		ti.ProjectID = records.Some(&id)
	}
	if in.ProjectName != "" {
		id, err := s.projectByName(ctx, in.ProjectName)
		if err != nil {
			return nil, err
		}
		ti.ProjectID = records.Some(&id)
	}
	if in.Due != "" {
		d := in.Due
		ti.Due = records.Some(&d)
	}
	if len(in.People) > 0 {
		ids, err := s.peopleIDs(ctx, in.People)
		if err != nil {
			return nil, err
		}
		ti.People = records.Some(ids)
	}
	pg := in.Page
	if in.From != "" {
		k, id, ok := records.ParseHandle(in.From)
		if !ok {
			return nil, badRequest("from must be a handle like ensemble://task/tsk_…, not %q.", in.From)
		}
		title, err := s.rec.Title(ctx, k, id)
		if err != nil {
			return nil, badRequest("from names %s, which does not exist.", in.From)
		}
		pg = strings.TrimRight(pg, "\n")
		if pg != "" {
			pg += "\n\n"
		}
		pg += fmt.Sprintf("Related: [%s](%s)\n", title, records.Handle(k, id))
	}
	if pg != "" {
		ti.Page = records.Some(pg)
	}
	var t records.Task
	summary := fmt.Sprintf("%s created task “%s” (bridge.create_task)", c.Actor.Name, strings.TrimSpace(in.Title))
	g, err := s.rec.Batch(ctx, c.Actor, summary, func(b *records.Batch) error {
		var err error
		t, err = s.rec.Tasks().CreateIn(b, ti)
		return err
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"task": t, "ref": records.Handle("task", t.ID), "undoable": true, "ledgerGroup": g.ID}, nil
}

func (s *Service) projectByName(ctx context.Context, name string) (string, error) {
	ps, err := s.rec.Projects().List(ctx)
	if err != nil {
		return "", err
	}
	var ids []string
	for _, p := range ps {
		if strings.EqualFold(strings.TrimSpace(p.Name), strings.TrimSpace(name)) {
			ids = append(ids, p.ID)
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		return "", badRequest("No project is called “%s”; list them with ensemble_projects.", name)
	}
	return "", badRequest("%d projects are called “%s”; pass projectId instead.", len(ids), name)
}

// peopleIDs turns names or ids into person ids; a name must belong to exactly one person.
func (s *Service) peopleIDs(ctx context.Context, names []string) ([]string, error) {
	ps, err := s.rec.People().List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(strings.TrimPrefix(n, "ensemble://person/"))
		var ids []string
		for _, p := range ps {
			if p.ID == n || strings.EqualFold(p.Name, n) {
				ids = append(ids, p.ID)
			}
		}
		switch len(ids) {
		case 0:
			return nil, badRequest("No person is called “%s”; list people with ensemble_people or add them with ensemble_act hub_create_person.", n)
		case 1:
			out = append(out, ids[0])
		default:
			return nil, badRequest("%d people are called “%s”; pass their id instead.", len(ids), n)
		}
	}
	return out, nil
}

// UpdateTaskInput moves a task, adds a note to its page, or both.
type UpdateTaskInput struct {
	Status     string `json:"status,omitempty"`
	Note       string `json:"note,omitempty"`
	MatchTitle string `json:"matchTitle,omitempty"`
}

// bridgeStatuses are the statuses an editor may move a task to.
var bridgeStatuses = []string{"in_progress", "waiting_approval", "done", "blocked", "todo"}

// UpdateTask moves a task along the state machine and appends a note to its page as a block titled
// "Update from <key name>". A matchTitle that is not the task's title is refused (409), so an agent
// holding a stale id cannot change the wrong task.
func (s *Service) UpdateTask(ctx context.Context, c Caller, ref string, in UpdateTaskInput) (map[string]any, error) {
	if err := c.mayWrite(); err != nil {
		return nil, err
	}
	k, id, ok := refOf(ref, "task")
	if !ok || k != "task" {
		id = ref
	}
	if in.Status == "" && strings.TrimSpace(in.Note) == "" {
		return nil, badRequest("Give a status, a note, or both.")
	}
	if in.Status != "" && !contains(bridgeStatuses, in.Status) {
		return nil, badRequest("Status %q is not one of in_progress, waiting_approval, done, blocked or todo.", in.Status)
	}
	if n := len([]rune(in.Note)); n > 20000 {
		return nil, badRequest("The note is %d characters long; the most is 20000.", n)
	}
	var t records.Task
	title := id
	if cur, err := s.rec.Tasks().Get(ctx, id); err == nil {
		title = cur.Title
	}
	summary := fmt.Sprintf("%s updated task “%s” (bridge.update_task)", c.Actor.Name, title)
	g, err := s.rec.Batch(ctx, c.Actor, summary, func(b *records.Batch) error {
		cur, err := s.rec.Tasks().UpdateIn(b, id, records.TaskInput{})
		if err != nil {
			return err
		}
		if in.MatchTitle != "" && strings.TrimSpace(in.MatchTitle) != strings.TrimSpace(cur.Title) {
			return refuse(http.StatusConflict, "Task %s is called “%s”, not “%s”; nothing was changed.", records.Handle("task", id), cur.Title, in.MatchTitle)
		}
		ti := records.TaskInput{}
		if in.Status != "" {
			ti.Status = records.Some(records.Status(in.Status))
		}
		if note := strings.TrimSpace(in.Note); note != "" {
			block := fmt.Sprintf("### Update from %s\n_%s_\n\n%s", c.Actor.Name, s.now().UTC().Format(time.RFC3339), note)
			ti.Page = records.Some(appendBlock(cur.Page, block))
		}
		t, err = s.rec.Tasks().UpdateIn(b, id, ti)
		return err
	})
	if err != nil {
		return nil, err
	}
	t.Page = ""
	return map[string]any{"task": t, "ref": records.Handle("task", t.ID), "undoable": true, "ledgerGroup": g.ID}, nil
}

func appendBlock(md, block string) string {
	md = strings.TrimRight(md, "\n")
	if md == "" {
		return block + "\n"
	}
	return md + "\n\n" + block + "\n"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// UploadInput is a new file.
type UploadInput struct {
	Filename   string `json:"filename"`
	DataBase64 string `json:"dataBase64"`
	MediaType  string `json:"mediaType,omitempty"`
	AttachTo   string `json:"attachTo,omitempty"`
	Summary    string `json:"summary,omitempty"`
}

// MaxUpload is the largest file one upload carries.
const MaxUpload = 20 << 20

// Upload keeps a new file and, with AttachTo, puts it on a record.
func (s *Service) Upload(ctx context.Context, c Caller, in UploadInput) (map[string]any, error) {
	if err := c.mayWrite(); err != nil {
		return nil, err
	}
	data, err := base64.StdEncoding.DecodeString(in.DataBase64)
	if err != nil {
		return nil, badRequest("dataBase64 is not valid base64.")
	}
	if len(data) > MaxUpload {
		return nil, refuse(http.StatusRequestEntityTooLarge, "The file is %d MB; an upload from an editor carries up to 20 MB.", len(data)>>20)
	}
	nf := records.NewFile{Name: in.Filename, MediaType: in.MediaType, Data: data, Summary: in.Summary, Source: "bridge"}
	if in.AttachTo != "" {
		nf.Attach = []string{in.AttachTo}
	}
	f, err := s.files.Add(ctx, c.Actor, nf)
	if err != nil {
		return nil, err
	}
	return map[string]any{"file": fileDetails(f), "ref": records.Handle("file", f.ID), "undoable": true}, nil
}
