package workspace

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// SearchInput is a ranked word search.
type SearchInput struct {
	Query string   `json:"query"`
	Kinds []string `json:"kinds,omitempty"`
	Near  string   `json:"near,omitempty"`
	Limit int      `json:"limit,omitempty"` // hits come up to limit × 3, at most 40
}

// Search is ranked word matching plus graph links; a miss says so.
func (s *Service) Search(ctx context.Context, in SearchInput) (map[string]any, error) {
	if n := len([]rune(in.Query)); n == 0 || n > 500 {
		return nil, badRequest("Search needs 1 to 500 characters of words.")
	}
	limit := clampLimit(in.Limit, 10, 40)
	kinds := make([]string, 0, len(in.Kinds))
	for _, k := range in.Kinds {
		if k == "document" {
			k = "file"
		}
		if what, ok := hostedKinds[k]; ok {
			return nil, badRequest("This Ensemble keeps no %s yet; search task, project, person, repo, page or file.", what)
		}
		kinds = append(kinds, k)
	}
	hits, err := s.rec.Search(ctx, records.SearchQuery{Text: in.Query, Kinds: kinds, Near: in.Near, Limit: min(limit*3, records.MaxSearchHits)})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"query": in.Query, "hits": labelHits(hits), "count": len(hits), "notice": NotInstructions,
		"method": "Ranked word matching (SQLite FTS5, BM25) plus graph links; not semantic search."}
	if len(hits) == 0 {
		out["message"] = fmt.Sprintf("Nothing in Ensemble matches “%s”.", in.Query)
	}
	return out, nil
}

// hit is a search hit whose snippet, cut from a page, note or file the person did not necessarily
// write, is labelled untrusted.
type hit struct {
	records.SearchHit
	Snippet *Untrusted `json:"snippet,omitempty"`
}

func labelHits(hits []records.SearchHit) []hit {
	out := make([]hit, len(hits))
	for i, h := range hits {
		out[i] = hit{SearchHit: h}
		if h.Snippet != "" {
			out[i].Snippet = &Untrusted{Trust: "untrusted", Source: h.Ref, Text: h.Snippet, More: "ensemble_read " + h.Ref + " reads it whole."}
		}
	}
	return out
}

// ListInput pages a list and, for tasks, filters it.
type ListInput struct {
	ID      string `json:"id,omitempty"`
	Status  string `json:"status,omitempty"`
	Project string `json:"project,omitempty"`
	Query   string `json:"query,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Offset  int    `json:"offset,omitempty"`
}

func matches(q string, fields ...string) bool {
	q = strings.ToLower(strings.TrimSpace(q))
	if q == "" {
		return true
	}
	for _, f := range fields {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return false
}

func paged[T any](name string, all []T, in ListInput) map[string]any {
	limit := clampLimit(in.Limit, 50, 100)
	return map[string]any{name: page(all, in.Offset, limit), "total": len(all), "offset": max(in.Offset, 0), "limit": limit}
}

// Tasks lists tasks not in Trash (open ones unless a status is named), or reads one.
func (s *Service) Tasks(ctx context.Context, in ListInput) (map[string]any, error) {
	if in.ID != "" {
		return s.Read(ctx, ReadInput{Kind: "task", ID: in.ID})
	}
	st := records.Status(in.Status)
	if st != "" && st != "open" && st != "all" && !st.Valid() {
		return nil, badRequest("Status %q is not one of open, all, proposed, todo, in_progress, waiting_approval, blocked, done or dropped.", in.Status)
	}
	all, err := s.rec.ListTasks(ctx, records.TaskFilter{})
	if err != nil {
		return nil, err
	}
	var out []Card
	for _, t := range all {
		switch {
		case st == "" || st == "open":
			if !open(t) {
				continue
			}
		case st != "all" && t.Status != st:
			continue
		}
		if in.Project != "" && (t.ProjectID == nil || *t.ProjectID != strings.TrimPrefix(in.Project, "ensemble://project/")) {
			continue
		}
		if !matches(in.Query, t.Title) {
			continue
		}
		out = append(out, taskCard(t))
	}
	return paged("tasks", nonNil(out), in), nil
}

// Projects lists projects or reads one.
func (s *Service) Projects(ctx context.Context, in ListInput) (map[string]any, error) {
	if in.ID != "" {
		return s.Read(ctx, ReadInput{Kind: "project", ID: in.ID})
	}
	all, err := s.rec.Projects().List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Card
	for _, p := range all {
		if matches(in.Query, p.Name, p.Summary) {
			out = append(out, card("project", p.ID, p.Name, strings.TrimSpace(p.Status+" "+p.Summary)))
		}
	}
	return paged("projects", nonNil(out), in), nil
}

// Repos lists repositories or reads one.
func (s *Service) Repos(ctx context.Context, in ListInput) (map[string]any, error) {
	if in.ID != "" {
		return s.Read(ctx, ReadInput{Kind: "repo", ID: in.ID})
	}
	all, err := s.rec.Repos().List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Card
	for _, r := range all {
		if matches(in.Query, r.Name, r.URL, r.Path) {
			out = append(out, card("repo", r.ID, r.Name, firstOf(r.URL, r.Path)))
		}
	}
	return paged("repos", nonNil(out), in), nil
}

// People lists people or reads one.
func (s *Service) People(ctx context.Context, in ListInput) (map[string]any, error) {
	if in.ID != "" {
		return s.Read(ctx, ReadInput{Kind: "person", ID: in.ID})
	}
	all, err := s.rec.People().List(ctx)
	if err != nil {
		return nil, err
	}
	var out []personCard
	for _, p := range all {
		if matches(in.Query, p.Name, p.Role, p.Team, p.Email) {
			out = append(out, personCard{Card: card("person", p.ID, p.Name, ""), Role: p.Role, Team: p.Team, Relationship: p.Relationship})
		}
	}
	return paged("people", nonNil(out), in), nil
}

// Missing answers for a kind of record this runtime does not keep yet.
func Missing(name, what string) map[string]any {
	return map[string]any{name: []any{}, "total": 0, "message": what}
}

// Deliverables: none yet.
func (s *Service) Deliverables(ctx context.Context) (map[string]any, error) {
	return Missing("deliverables", "This Ensemble keeps no deliverables yet."), nil
}

// Meetings: no calendar here.
func (s *Service) Meetings(ctx context.Context) (map[string]any, error) {
	return Missing("meetings", "This Ensemble has no calendar: calendar events come from connected apps, a hosted Ensemble feature."), nil
}

// decision is a pending Needs-me card, read only. What an agent wrote (its question, the tool call
// it asks permission for and its reason) is labelled untrusted: it is an editor's or an agent's
// tool input, not the person's word.
type decision struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Title     string     `json:"title"`
	Question  *Untrusted `json:"question,omitempty"`
	Call      *Untrusted `json:"call,omitempty"`
	Reason    *Untrusted `json:"reason,omitempty"`
	RunID     string     `json:"runId,omitempty"`
	CreatedAt string     `json:"createdAt"`
}

// Decisions lists what waits on the person in Needs me, read only.
func (s *Service) Decisions(ctx context.Context) (map[string]any, error) {
	pending, err := needs.OpenDecisions(ctx, s.db, 100)
	if err != nil {
		return nil, fmt.Errorf("workspace: read Needs me: %w", err)
	}
	out := []decision{}
	for _, nd := range pending {
		d := decision{ID: nd.ID, Kind: string(nd.Kind), Title: nd.Source.Title, RunID: nd.Source.RunID, CreatedAt: store.Stamp(nd.Created)}
		src := "ensemble://decision/" + d.ID
		d.Question, d.Call, d.Reason = untrusted(src, nd.Question, 2000, src), untrusted(src, nd.Call, 2000, src), untrusted(src, nd.Reason, 2000, src)
		out = append(out, d)
	}
	return map[string]any{"decisions": out, "total": len(out), "readOnly": "Answer these in Ensemble; editors and agents cannot answer Needs me.", "notice": NotInstructions}, nil
}

// Today is the person's day: focus, proposals, what waits for review, what others owe, what is due,
// and Needs-me counts. Dates are in the runtime's time zone.
func (s *Service) Today(ctx context.Context) (map[string]any, error) {
	all, err := s.rec.ListTasks(ctx, records.TaskFilter{})
	if err != nil {
		return nil, err
	}
	now := s.now()
	today := now.Format(time.DateOnly)
	var focus, proposed, review, owed, due, overdue []Card
	for _, t := range all {
		if !open(t) {
			continue
		}
		switch t.Status {
		case records.InProgress:
			focus = append(focus, taskCard(t))
		case records.Proposed:
			proposed = append(proposed, taskCard(t))
		case records.WaitingApproval:
			review = append(review, taskCard(t))
		}
		for _, l := range t.Labels {
			if l == "waiting-on" {
				owed = append(owed, taskCard(t))
			}
		}
		if t.Due != nil {
			if *t.Due == today {
				due = append(due, taskCard(t))
			} else if *t.Due < today {
				overdue = append(overdue, taskCard(t))
			}
		}
	}
	out := map[string]any{"date": today, "timeZone": now.Location().String(),
		"focus": nonNil(focus), "proposedTodos": nonNil(proposed), "readyForReview": nonNil(review),
		"othersOwe": nonNil(owed), "dueToday": nonNil(due), "overdue": nonNil(overdue),
		"deliverables": []any{}, "meetings": []any{},
		"missing": "This Ensemble keeps no deliverables or calendar yet."}
	n, _ := needs.CountOpen(ctx, s.db)
	out["needsMe"] = map[string]int{"open": n}
	return out, nil
}

// Gaps says what the bridge does not have or will not give, so a model does not invent it.
func (s *Service) Gaps(ctx context.Context) map[string]any {
	gaps := []string{
		"Search is ranked word matching (SQLite FTS5) plus links between records; there is no embedding or semantic search.",
		"Bridge reads return stored text as it is, with no new redaction pass.",
		"Ensemble on this computer keeps tasks, projects, people, repositories, pages, files and the person's skills; it keeps no deliverables, meetings or meeting notes, calendar, diagrams, plots, boards, routines or reminders yet, and mail and chats only when the person saved them as pages or files.",
		"Skills: only each skill's current body is given; older bodies are not kept.",
		"Files: one answer carries a file up to 20 MB; a larger one is saved with ensemble_get_file saveTo into the working folder. Ensemble's text of a file exists only for text and code files: no OCR, audio or video.",
		"There is one space, the person's own; other people's spaces, shared spaces and OAuth are hosted Ensemble features.",
		"A key with changes allowed may create, update and move to Trash tasks, pages, projects, people and repositories, add files, and append notes to tasks; it cannot delete a file, edit a file's original, change settings, assign work to agents or stop runs, and every change can be undone in Ensemble.",
		"Connected apps (mail, calendars, Notion, Slack…) are a hosted Ensemble feature and are not reachable from this computer.",
	}
	gaps = append(gaps, "Needs me is read only: answers are given in Ensemble.")
	return map[string]any{"gaps": gaps}
}

// FilesInput lists files.
type FilesInput struct {
	Query  string `json:"query,omitempty"`
	On     string `json:"on,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

func fileDetails(f records.File) map[string]any {
	return map[string]any{"id": f.ID, "ref": records.Handle("file", f.ID), "name": f.Name, "format": format(f),
		"mediaType": f.MediaType, "size": f.Size, "pages": nil, "summary": f.Summary, "tags": nonNil(f.Tags),
		"attached": nonNil(f.Attached), "source": f.Source, "created": f.CreatedAt, "hasText": f.HasText}
}

func format(f records.File) string {
	if i := strings.LastIndex(f.Name, "."); i >= 0 && i < len(f.Name)-1 {
		return strings.ToLower(f.Name[i+1:])
	}
	return f.MediaType
}

// Files lists the person's files, newest first.
func (s *Service) Files(ctx context.Context, in FilesInput) (map[string]any, error) {
	limit := clampLimit(in.Limit, 20, 50)
	list, total, err := s.files.List(ctx, records.FileFilter{Query: in.Query, On: in.On, Limit: limit, Offset: in.Offset})
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(list))
	for i, f := range list {
		out[i] = fileDetails(f)
	}
	ans := map[string]any{"files": out, "total": total, "offset": max(in.Offset, 0), "limit": limit}
	if total == 0 {
		ans["message"] = "No files match."
	}
	return ans, nil
}

// FileInput reads one file's details and, with Text, Ensemble's text of it in parts.
type FileInput struct {
	ID     string `json:"id"`
	Text   bool   `json:"text,omitempty"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"` // characters of text, at most 20,000
}

// MaxTextPart is the most characters of a file's text one answer carries.
const MaxTextPart = 20000

// File returns a file's details and, when asked, a part of its text.
func (s *Service) File(ctx context.Context, in FileInput) (map[string]any, error) {
	_, id, err := kindOf(in.ID, "file")
	if err != nil {
		return nil, err
	}
	f, err := s.files.Get(ctx, id)
	if err != nil {
		return nil, refuse(http.StatusNotFound, "There is no file %s.", records.Handle("file", id))
	}
	out := map[string]any{"file": fileDetails(f)}
	if in.Text {
		t, err := s.files.Text(ctx, id)
		if err != nil {
			return nil, err
		}
		if t == "" {
			out["text"] = map[string]any{"message": "Ensemble keeps no text of this file: it reads text only from text and code files (no OCR, audio or video)."}
		} else {
			u := &Untrusted{Trust: "untrusted", Source: records.Handle("file", id)}
			limit := clampLimit(in.Limit, MaxTextPart, MaxTextPart)
			u.Text, u.More = excerpt(t, max(in.Offset, 0), limit, records.Handle("file", id))
			if u.More != "" {
				u.More = strings.Replace(u.More, "ensemble_read", "ensemble_get_file text=true", 1)
			}
			out["text"] = u
			out["notice"] = NotInstructions
		}
	}
	return out, nil
}
