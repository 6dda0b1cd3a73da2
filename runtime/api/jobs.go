package api

import (
	"context"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// mountJobs adds the routes of runs (jobs):
//
//	POST /api/agent/assign               {taskId | title, agent, folder | repoUrl, worktree, brief, settings, profile} → 201 the job
//	                                     (profile, an id or name: the agent, folder and each setting the request leaves out)
//	GET  /api/agent/jobs                 [taskId]
//	GET  /api/agent/jobs/{id}            the job with its settings, status, usage and summary
//	GET  /api/agent/jobs/{id}/events     SSE: the run's trace from the start (or since=, Last-Event-ID), then live
//	                                     (the event stream narrowed to the run: /api/events?kinds=run.&subject={id}, from 0)
//	POST /api/agent/jobs/{id}/stop
//	POST /api/agent/jobs/{id}/pause
//	POST /api/agent/jobs/{id}/resume
//	GET  /api/agent/jobs/{id}/live       the latest picture of the tab the run's agent uses (image/jpeg, no-store,
//	                                     X-Ensemble-Live-At, -Tab, -Url, -Title (URI-encoded), -Width, -Height), or
//	                                     204 when there is none, or it is paused (X-Ensemble-Live-Paused: sensitive,
//	                                     controlled, secret_on_screen); run.live says when it changes
//	GET  /api/agent/jobs/{id}/held       what the run's browser tools held for the person's preview
//	GET  /api/agent/jobs/{id}/held/{evidence}           the held file, for the person only
//	POST /api/agent/jobs/{id}/held/{evidence}/release   → the run's evidence, same id
//	POST /api/agent/jobs/{id}/held/{evidence}/discard   → deleted
func (s *Server) mountJobs(mux *http.ServeMux, api func(string, http.HandlerFunc)) {
	if s.opts.Jobs == nil {
		return
	}
	// The runs' own MCP server: it has its own secret per run, not the launch token.
	mux.Handle("/mcp/run", s.opts.Jobs.MCPHandler())
	api("POST /api/agent/assign", s.assign)
	s.mountProfiles(api)
	api("GET /api/agent/jobs", s.listJobs)
	api("GET /api/agent/jobs/{id}", s.getJob)
	api("GET /api/agent/jobs/{id}/events", s.jobEvents)
	api("GET /api/agent/jobs/{id}/evidence/{evidence}", s.jobEvidence)
	api("POST /api/agent/jobs/{id}/stop", s.jobAction((*jobs.Service).Stop))
	api("POST /api/agent/jobs/{id}/pause", s.jobAction((*jobs.Service).Pause))
	api("POST /api/agent/jobs/{id}/resume", s.jobAction((*jobs.Service).Resume))
	api("GET /api/agent/jobs/{id}/live", s.jobLive)
	api("GET /api/agent/jobs/{id}/held", s.listHeld)
	api("GET /api/agent/jobs/{id}/held/{evidence}", s.heldFile)
	api("POST /api/agent/jobs/{id}/held/{evidence}/release", s.releaseHeld)
	api("POST /api/agent/jobs/{id}/held/{evidence}/discard", s.discardHeld)
}

// jobLive answers a run's live picture. Nothing of it is stored: it is the latest in memory.
func (s *Server) jobLive(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.opts.Jobs.Get(r.Context(), id); err != nil {
		s.writeErr(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "private, no-store")
	p, ok := s.opts.Jobs.LivePicture(id)
	if !ok || p.Paused != "" || len(p.Image) == 0 {
		if ok && p.Paused != "" {
			h.Set("X-Ensemble-Live-Paused", p.Paused)
			h.Set("X-Ensemble-Live-Tab", p.Tab)
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.Set("Content-Type", "image/jpeg")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Ensemble-Live-At", p.At.Format(time.RFC3339Nano))
	h.Set("X-Ensemble-Live-Tab", p.Tab)
	h.Set("X-Ensemble-Live-Url", url.PathEscape(p.URL))
	h.Set("X-Ensemble-Live-Title", url.PathEscape(p.Title))
	h.Set("X-Ensemble-Live-Width", strconv.Itoa(p.Width))
	h.Set("X-Ensemble-Live-Height", strconv.Itoa(p.Height))
	w.Write(p.Image)
}

func (s *Server) listHeld(w http.ResponseWriter, r *http.Request) {
	held, err := s.opts.Jobs.HeldFiles(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"held": held})
}

// heldFile shows the person a file held from the run, as evidence is served.
func (s *Server) heldFile(w http.ResponseWriter, r *http.Request) {
	f, name, err := s.opts.Jobs.HeldFile(r.PathValue("id"), r.PathValue("evidence"))
	if err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	s.serveEvidence(w, r, name, f)
}

func (s *Server) releaseHeld(w http.ResponseWriter, r *http.Request) {
	ev, err := s.opts.Jobs.ReleaseHeld(r.Context(), r.PathValue("id"), r.PathValue("evidence"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ev)
}

func (s *Server) discardHeld(w http.ResponseWriter, r *http.Request) {
	err := s.opts.Jobs.DiscardHeld(r.Context(), r.PathValue("id"), r.PathValue("evidence"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// assignBody is an assignment as the route takes it: the request, and a run profile (its id or
// name) that fills what the request leaves out.
type assignBody struct {
	jobs.AssignRequest
	Profile string `json:"profile,omitempty"`
}

func (s *Server) assign(w http.ResponseWriter, r *http.Request) {
	var body assignBody
	if err := decode(w, r, &body); err != nil {
		s.writeErr(w, r, err)
		return
	}
	req := body.AssignRequest
	if strings.TrimSpace(body.Profile) != "" {
		switch {
		case s.opts.Profiles == nil:
			writeError(w, http.StatusBadRequest, "This Ensemble keeps no run profiles; leave out the profile.")
			return
		case req.Continue != "":
			writeError(w, http.StatusBadRequest, "A run that continues a session keeps that session's agent and folder; leave out the profile.")
			return
		}
		p, err := s.opts.Profiles.Find(r.Context(), body.Profile)
		if problem.Is(err, problem.KindNotFound) {
			// A profile named in the body that is not there is input to correct, not a missing page.
			writeError(w, http.StatusBadRequest, problem.Sentence(err))
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		req = p.Fill(req)
	}
	req.Actor = person
	j, err := s.opts.Jobs.Assign(r.Context(), req)
	s.answerJob(w, r, http.StatusCreated, j, err)
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	taskID := r.URL.Query().Get("taskId")
	s.answerList(w, r, "jobs", func(ctx context.Context) (any, error) { return s.opts.Jobs.List(ctx, taskID) })
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.opts.Jobs.Get(r.Context(), r.PathValue("id"))
	s.answerJob(w, r, http.StatusOK, j, err)
}

func (s *Server) jobAction(act func(*jobs.Service, context.Context, string) (jobs.Job, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		j, err := act(s.opts.Jobs, r.Context(), r.PathValue("id"))
		s.answerJob(w, r, http.StatusOK, j, err)
	}
}

// jobEvents streams one run's events: the one event stream narrowed by [jobs.TraceFilter], for
// clients that follow one run (ensemble run). Without since or Last-Event-ID it replays the run's
// whole trace first, so a client that opens it late still sees the run from its start; so it does,
// after a reset event, for a client that saw more than the log holds. The web UI reads the trace's
// start from /api/events/log instead and follows its one stream.
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.opts.Jobs.Get(r.Context(), id); err != nil {
		s.answerJob(w, r, 0, jobs.Job{}, err)
		return
	}
	after, err := resumePoint(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// A client that saw more than the log holds is sent the trace again from its start.
	s.stream(w, r, max(after, 0), 0, jobs.TraceFilter(id))
}

// answerJob answers with a job, or with the status and sentence a jobs error calls for.
func (s *Server) answerJob(w http.ResponseWriter, r *http.Request, status int, j jobs.Job, err error) {
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, status, j)
}

// jobEvidence sends a file a run attached. It is served as a download of its own type only where
// that type is harmless to show (pictures, plain text); anything else is an attachment, so a page
// an agent wrote can never run in the runtime's origin.
func (s *Server) jobEvidence(w http.ResponseWriter, r *http.Request) {
	f, name, err := s.opts.Jobs.EvidenceFile(r.PathValue("id"), r.PathValue("evidence"))
	if err != nil {
		writeError(w, http.StatusNotFound, "There is no such evidence in this run.")
		return
	}
	s.serveEvidence(w, r, name, f)
}

// serveEvidence sends a file a run or a node brought in, as its own type only where that type is
// harmless to show (pictures, plain text, PDF), else as an attachment; with nosniff and a sandbox
// CSP, so nothing in it can run in the runtime's origin; never cached, since a held capture or a
// shared file may show what only its owner may see (and a phone's cache outlives the session).
func (s *Server) serveEvidence(w http.ResponseWriter, r *http.Request, name string, f *os.File) {
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox")
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf":
		h.Set("Content-Type", mime.TypeByExtension(ext))
	case ".txt", ".log", ".md", ".json", ".csv":
		h.Set("Content-Type", "text/plain; charset=utf-8")
	default:
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	}
	http.ServeContent(w, r, "", st.ModTime(), f)
}
