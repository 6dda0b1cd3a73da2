package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
)

// collection is what the routes of one record kind need.
type collection[T, In any] interface {
	Get(ctx context.Context, id string) (T, error)
	Create(ctx context.Context, actor ledger.Actor, in In) (T, error)
	Update(ctx context.Context, actor ledger.Actor, id string, in In) (T, error)
	Trash(ctx context.Context, actor ledger.Actor, id string) (T, error)
}

// mountCollection adds POST /api/<name>, GET, PATCH and DELETE /api/<name>/{id}, and GET /api/<name>
// when list is given. A list answer carries seq, the newest event it includes, so a client can
// follow the event stream from there without missing or replaying a change.
func mountCollection[T, In any](s *Server, api func(string, http.HandlerFunc), name string, c collection[T, In], list func(context.Context) ([]T, error)) {
	base := "/api/" + name
	if list != nil {
		api("GET "+base, func(w http.ResponseWriter, r *http.Request) {
			s.answerList(w, r, name, func(ctx context.Context) (any, error) { return list(ctx) })
		})
	}
	api("POST "+base, func(w http.ResponseWriter, r *http.Request) {
		var in In
		if err := decode(w, r, &in); err != nil {
			s.writeErr(w, r, err)
			return
		}
		rec, err := c.Create(r.Context(), person, in)
		s.answer(w, r, http.StatusCreated, rec, err)
	})
	api("GET "+base+"/{id}", func(w http.ResponseWriter, r *http.Request) {
		rec, err := c.Get(r.Context(), r.PathValue("id"))
		s.answer(w, r, http.StatusOK, rec, err)
	})
	api("PATCH "+base+"/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in In
		if err := decode(w, r, &in); err != nil {
			s.writeErr(w, r, err)
			return
		}
		rec, err := c.Update(r.Context(), person, r.PathValue("id"), in)
		s.answer(w, r, http.StatusOK, rec, err)
	})
	api("DELETE "+base+"/{id}", func(w http.ResponseWriter, r *http.Request) {
		rec, err := c.Trash(r.Context(), person, r.PathValue("id"))
		s.answer(w, r, http.StatusOK, rec, err)
	})
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	switch {
	case err != nil:
		s.writeErr(w, r, err)
	case status == http.StatusNoContent:
		w.WriteHeader(status)
	default:
		writeJSON(w, status, v)
	}
}

// answerList reads seq, then the list. Reading seq first means the list is at least as new as seq:
// a change that lands in between shows in the list and again as an event, which a client applies
// twice harmlessly; no change is ever missed.
func (s *Server) answerList(w http.ResponseWriter, r *http.Request, name string, list func(context.Context) (any, error)) {
	seq, err := events.Last(r.Context(), s.store.Reader())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	items, err := list(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{name: items, "seq": seq})
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := records.TaskFilter{Status: records.Status(q.Get("status")), ProjectID: q.Get("projectId"),
		OwnerID: q.Get("ownerId"), Label: q.Get("label")}
	if f.Status != "" && !f.Status.Valid() {
		writeError(w, http.StatusBadRequest, "Unknown status "+strconv.Quote(string(f.Status))+".")
		return
	}
	s.answerList(w, r, "tasks", func(ctx context.Context) (any, error) {
		ts, err := s.records.ListTasks(ctx, f)
		if err == nil && s.opts.Nodes != nil {
			s.opts.Nodes.NameAssignees(ctx, ts)
		}
		return ts, err
	})
}

func (s *Server) taskStates(w http.ResponseWriter, r *http.Request) {
	labels := map[records.Status]string{}
	for _, st := range records.Statuses {
		labels[st] = st.Label()
	}
	writeJSON(w, http.StatusOK, map[string]any{"states": records.Statuses, "labels": labels, "moves": records.Moves()})
}

func (s *Server) trash(w http.ResponseWriter, r *http.Request) {
	s.answerList(w, r, "items", func(ctx context.Context) (any, error) { return s.records.Trash(ctx) })
}

func (s *Server) restore(w http.ResponseWriter, r *http.Request) {
	rec, err := s.records.Restore(r.Context(), person, r.PathValue("kind"), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, rec, err)
}

func (s *Server) purge(w http.ResponseWriter, r *http.Request) {
	err := s.records.Purge(r.Context(), person, r.PathValue("kind"), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, map[string]bool{"deleted": true}, err)
}

func (s *Server) undo(w http.ResponseWriter, r *http.Request) {
	g, err := s.records.Undo(r.Context(), person)
	s.answer(w, r, http.StatusOK, map[string]any{"group": g}, err)
}

func (s *Server) redo(w http.ResponseWriter, r *http.Request) {
	g, err := s.records.Redo(r.Context(), person)
	s.answer(w, r, http.StatusOK, map[string]any{"group": g}, err)
}

func (s *Server) ledger(w http.ResponseWriter, r *http.Request) {
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 || limit > 500 {
		limit = 50
	}
	gs, err := ledger.List(r.Context(), s.store.Reader(), before, limit)
	if gs == nil {
		gs = []ledger.Group{}
	}
	s.answer(w, r, http.StatusOK, map[string]any{"groups": gs}, err)
}
