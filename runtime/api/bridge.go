package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/ensemblework/ensemble/bridge/keyform"
	"github.com/ensemblework/ensemble/runtime/bridge/keys"
	"github.com/ensemblework/ensemble/runtime/bridge/workspace"
	"github.com/ensemblework/ensemble/runtime/httpin"
	"github.com/ensemblework/ensemble/runtime/records"
)

// Bridge is what the context bridge's routes need: the keys, the workspace answers, the files.
type Bridge struct {
	Keys  *keys.Store
	Work  *workspace.Service
	Files *records.Files
}

// maxUploadBody fits a 20 MB file in base64 with its JSON around it.
const maxUploadBody = 28 << 20

// mountBridge adds the key routes (for the person: launch token or browser session) and the
// bridge's routes under /api/bridge (for ens_ keys only).
//
// A key never reaches /api/keys: those routes take only the person's credentials, so a key cannot
// make another key.
func (s *Server) mountBridge(mux *http.ServeMux, api func(string, http.HandlerFunc)) {
	b := s.opts.Bridge
	if b == nil {
		return
	}
	api("GET /api/keys", func(w http.ResponseWriter, r *http.Request) {
		ks, err := b.Keys.List(r.Context())
		s.bridgeAnswer(w, r, http.StatusOK, map[string]any{"keys": ks}, err)
	})
	api("POST /api/keys", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Name string `json:"name"`
			keys.Grants
		}
		if err := decode(w, r, &in); err != nil {
			s.writeErr(w, r, err)
			return
		}
		k, secret, err := b.Keys.Create(r.Context(), in.Name, in.Grants)
		s.bridgeAnswer(w, r, http.StatusCreated, map[string]any{"key": k, "secret": secret.Reveal(),
			"note": "This is the only time the key is shown; keep it in your editor's environment as ENSEMBLE_KEY."}, err)
	})
	api("DELETE /api/keys/{id}", func(w http.ResponseWriter, r *http.Request) {
		k, err := b.Keys.Revoke(r.Context(), r.PathValue("id"))
		s.bridgeAnswer(w, r, http.StatusOK, map[string]any{"key": k}, err)
	})

	route := func(pattern string, h func(r *http.Request, c workspace.Caller) (any, error)) {
		mux.Handle(pattern, s.keyed(func(w http.ResponseWriter, r *http.Request, c workspace.Caller) {
			if err := b.Work.CheckSpace(r.Context(), r.Header.Get("X-Ensemble-Space")); err != nil {
				s.bridgeAnswer(w, r, 0, nil, err)
				return
			}
			v, err := h(r, c)
			s.bridgeAnswer(w, r, http.StatusOK, v, err)
		}))
	}
	// read decodes the body (JSON arguments; reads are POSTed because their arguments are
	// structured) into In and answers with f.
	read := func(name string, f func(ctx context.Context, r *http.Request, raw []byte, c workspace.Caller) (any, error)) {
		route("POST /api/bridge/"+name, func(r *http.Request, c workspace.Caller) (any, error) {
			raw, err := httpin.ReadBody(nil, r, maxBody)
			if err != nil {
				return nil, err
			}
			return f(r.Context(), r, raw, c)
		})
	}
	route("GET /api/bridge/whoami", func(r *http.Request, c workspace.Caller) (any, error) {
		sp, err := b.Work.Spaces(r.Context())
		if err != nil {
			return nil, err
		}
		return map[string]any{"keyName": c.Actor.Name, "keyId": c.Actor.ID, "canWrite": c.CanWrite, "canUseApps": c.CanUseApps,
			"apps": []string{}, "spaceId": records.PersonalSpace, "spaceName": sp["spaces"].([]workspace.Space)[0].Name,
			"defaultSpace": map[string]string{"id": records.PersonalSpace, "name": sp["spaces"].([]workspace.Space)[0].Name},
			"crossSpace":   false, "crossSpaceNote": "This Ensemble keeps one space on this computer."}, nil
	})
	route("GET /api/bridge/spaces", func(r *http.Request, c workspace.Caller) (any, error) { return b.Work.Spaces(r.Context()) })
	route("GET /api/bridge/gaps", func(r *http.Request, c workspace.Caller) (any, error) { return b.Work.Gaps(r.Context()), nil })
	route("GET /api/bridge/today", func(r *http.Request, c workspace.Caller) (any, error) { return b.Work.Today(r.Context()) })
	route("GET /api/bridge/decisions", func(r *http.Request, c workspace.Caller) (any, error) { return b.Work.Decisions(r.Context()) })
	route("GET /api/bridge/deliverables", func(r *http.Request, c workspace.Caller) (any, error) { return b.Work.Deliverables(r.Context()) })
	route("GET /api/bridge/meetings", func(r *http.Request, c workspace.Caller) (any, error) { return b.Work.Meetings(r.Context()) })
	read("brief", jsonIn(b.Work.Brief))
	read("context", jsonIn(b.Work.Context))
	read("search", jsonIn(b.Work.Search))
	read("read", jsonIn(b.Work.Read))
	read("tasks", jsonIn(b.Work.Tasks))
	read("projects", jsonIn(b.Work.Projects))
	read("repos", jsonIn(b.Work.Repos))
	read("people", jsonIn(b.Work.People))
	read("skills", jsonIn(b.Work.Skills))
	read("files", jsonIn(b.Work.Files))
	read("file", jsonIn(b.Work.File))
	read("actions", func(ctx context.Context, r *http.Request, raw []byte, c workspace.Caller) (any, error) {
		in, err := bridgeDecode[workspace.ActionsInput](raw)
		if err != nil {
			return nil, err
		}
		return b.Work.Actions(ctx, c, in)
	})
	read("act/{name}", func(ctx context.Context, r *http.Request, raw []byte, c workspace.Caller) (any, error) {
		in, err := bridgeDecode[struct {
			Input json.RawMessage `json:"input"`
		}](raw)
		if err != nil {
			return nil, err
		}
		if k := httpin.Kind(in.Input); len(in.Input) > 0 && k != "object" && k != "null" {
			return nil, &httpin.Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf("Field \"input\" must be an object, not %s; send the action's input as {\"input\": {…}}.", k)}
		}
		return b.Work.Act(ctx, c, r.PathValue("name"), in.Input)
	})
	read("write/tasks", func(ctx context.Context, r *http.Request, raw []byte, c workspace.Caller) (any, error) {
		in, err := bridgeDecode[workspace.CreateTaskInput](raw)
		if err != nil {
			return nil, err
		}
		return b.Work.CreateTask(ctx, c, in)
	})
	route("PATCH /api/bridge/write/tasks/{id}", func(r *http.Request, c workspace.Caller) (any, error) {
		raw, err := httpin.ReadBody(nil, r, maxBody)
		if err != nil {
			return nil, err
		}
		in, err := bridgeDecode[workspace.UpdateTaskInput](raw)
		if err != nil {
			return nil, err
		}
		return b.Work.UpdateTask(r.Context(), c, r.PathValue("id"), in)
	})
	route("POST /api/bridge/write/files", func(r *http.Request, c workspace.Caller) (any, error) {
		raw, err := httpin.ReadBody(nil, r, maxUploadBody)
		if err != nil {
			return nil, err
		}
		in, err := bridgeDecode[workspace.UploadInput](raw)
		if err != nil {
			return nil, err
		}
		return b.Work.Upload(r.Context(), c, in)
	})
	mux.Handle("GET /api/bridge/files/{id}/original", s.keyed(func(w http.ResponseWriter, r *http.Request, c workspace.Caller) {
		f, meta, err := b.Files.Open(r.Context(), strings.TrimPrefix(r.PathValue("id"), "ensemble://file/"))
		if err != nil {
			if records.IsNotFound(err) {
				writeError(w, http.StatusNotFound, "There is no file with id "+strconv.Quote(r.PathValue("id"))+".")
				return
			}
			s.fail(w, r, err)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", meta.MediaType)
		w.Header().Set("Content-Length", strconv.FormatInt(meta.Size, 10))
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote(meta.Name))
		io.Copy(w, f)
	}))
	mux.HandleFunc("/api/bridge/", s.keyedFallback)
}

// keyedFallback answers a bridge route that does not exist (or a method it does not take), after
// the key check, so an unauthenticated caller learns nothing about the routes.
func (s *Server) keyedFallback(w http.ResponseWriter, r *http.Request) {
	s.keyed(func(w http.ResponseWriter, r *http.Request, c workspace.Caller) {
		writeError(w, http.StatusNotFound, "There is no such bridge route.")
	}).ServeHTTP(w, r)
}

func jsonIn[In any, Out any](f func(context.Context, In) (Out, error)) func(ctx context.Context, r *http.Request, raw []byte, c workspace.Caller) (any, error) {
	return func(ctx context.Context, r *http.Request, raw []byte, c workspace.Caller) (any, error) {
		in, err := bridgeDecode[In](raw)
		if err != nil {
			return nil, err
		}
		return f(ctx, in)
	}
}

// bridgeDecode reads a bridge request's JSON arguments by decode's rules (one object, no unknown
// fields, nothing after it); an empty body is no arguments.
func bridgeDecode[T any](raw []byte) (T, error) {
	var v T
	if len(bytes.TrimSpace(raw)) == 0 {
		return v, nil
	}
	err := httpin.Decode(raw, &v)
	return v, err
}

// keyed lets a request through with an ens_ key only: not the launch token, not a browser cookie.
func (s *Server) keyed(next func(http.ResponseWriter, *http.Request, workspace.Caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := httpin.Bearer(r.Header)
		switch {
		case !ok || tok == "":
			writeError(w, http.StatusUnauthorized, "The bridge needs an Ensemble key (ens_…): make one with `ensemble keys create NAME` and pass it as ENSEMBLE_KEY.")
			return
		case keyform.IsLaunchToken(tok):
			writeError(w, http.StatusUnauthorized, "The bridge takes an Ensemble key, not the runtime's launch token: make one with `ensemble keys create NAME`.")
			return
		}
		k, err := s.opts.Bridge.Keys.Check(r.Context(), tok)
		if errors.Is(err, keys.ErrUnknown) || errors.Is(err, keys.ErrRevoked) {
			writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		next(w, r, workspace.Caller{Actor: k.Actor(), CanWrite: k.CanWrite, CanUseApps: k.CanUseApps})
	})
}

// bridgeAnswer answers v as JSON, or the bridge's and the keys' refusals as writeErr does.
func (s *Server) bridgeAnswer(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, status, v)
}
