package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// mountGitCredential adds the route runs' git credential helper asks (spec 002 §8.7.5). It takes
// the run's own git token, not the launch token: the helper runs inside the run, which never has
// the launch token.
//
//	POST /api/engine/git-credential  {protocol, host, path?}: {username, password}; 404 when no
//	                                 secret the run names signs git in there; 401 without the
//	                                 token of a run that is going
func (s *Server) mountGitCredential(mux *http.ServeMux) {
	if s.opts.Jobs == nil {
		return
	}
	// Mounted like /mcp/run, by path: the launch token is not its credential, so the API's own
	// method routes (and their checks for the launch token) do not list it.
	mux.HandleFunc("/api/engine/git-credential", s.gitCredential)
}

func (s *Server) gitCredential(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !s.opts.Jobs.GitTokenLive(token) {
		writeError(w, http.StatusUnauthorized, jobs.ErrNoRunToken.Error())
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "Git's credential helper asks with POST.")
		return
	}
	var in secrets.GitRequest
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if in.Protocol == "" || in.Host == "" {
		writeError(w, http.StatusBadRequest, "A git credential request names its protocol and host (protocol=https, host=github.com).")
		return
	}
	a, err := s.opts.Jobs.GitCredential(r.Context(), token, in)
	if errors.Is(err, jobs.ErrNoRunToken) {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}
