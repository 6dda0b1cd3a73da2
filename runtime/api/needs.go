package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/ensemblework/ensemble/runtime/needs"
)

// mountNeeds adds the Needs me routes:
//
//	GET  /api/needs              open decisions, newest first   [all=1] [limit] [run]
//	GET  /api/needs/{id}
//	POST /api/needs/{id}/answer  {"option": 0} or {"text": "…"}
//
// Answers settle once: a second answer gets 409 with who answered and when.
func (s *Server) mountNeeds(api func(string, http.HandlerFunc)) {
	if s.opts.Needs == nil {
		return
	}
	api("GET /api/needs", s.listNeeds)
	api("GET /api/needs/{id}", s.getNeed)
	api("POST /api/needs/{id}/answer", s.answerNeed)
}

func (s *Server) listNeeds(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := needs.Filter{All: q.Get("all") == "1" || q.Get("all") == "true", RunID: q.Get("run")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n <= 0 {
			writeError(w, http.StatusBadRequest, "limit must be a whole number above 0.")
			return
		}
		f.Limit = n
	}
	s.answerList(w, r, "needs", func(ctx context.Context) (any, error) { return s.opts.Needs.List(ctx, f) })
}

func (s *Server) getNeed(w http.ResponseWriter, r *http.Request) {
	d, err := s.opts.Needs.Get(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, d, err)
}

// answerBody is an answer: the index of an option, or typed text.
type answerBody struct {
	Option *int    `json:"option"`
	Text   *string `json:"text"`
}

func (s *Server) answerNeed(w http.ResponseWriter, r *http.Request) {
	var in answerBody
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var a needs.Answer
	switch {
	case in.Option != nil && in.Text != nil:
		writeError(w, http.StatusBadRequest, `Send either "option" or "text", not both.`)
		return
	case in.Option != nil:
		if *in.Option < 0 {
			writeError(w, http.StatusBadRequest, `"option" is the option's number, from 0.`)
			return
		}
		a = needs.Choose(*in.Option)
	case in.Text != nil:
		a = needs.Say(*in.Text)
	default:
		writeError(w, http.StatusBadRequest, `Send the option's number ({"option": 0}) or free text ({"text": "…"}).`)
		return
	}
	d, err := s.opts.Needs.Answer(r.Context(), r.PathValue("id"), a, s.answerer(r))
	s.answer(w, r, http.StatusOK, d, err)
}

// answerer names the client a request comes through, for "answered by", in the order authenticate
// tries them: the launch token is the command line's (and other local programs'), the device
// cookie a paired phone's, the session cookie a browser's.
func (s *Server) answerer(r *http.Request) string {
	if r.Header.Get("Authorization") != "" {
		return needs.ByCommandLine
	}
	if _, err := r.Cookie(deviceCookie); err == nil && s.opts.Relay != "" {
		return needs.ByPhone
	}
	return needs.ByBrowser
}
