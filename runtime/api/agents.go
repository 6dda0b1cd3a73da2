package api

import (
	"net/http"

	"github.com/ensemblework/ensemble/engines"
)

// mountAgents serves which coding agents this computer has:
//
//	GET /api/agents            the agents as last detected  [refresh=1 detects again]
func (s *Server) mountAgents(api func(string, http.HandlerFunc)) {
	if s.opts.Agents == nil {
		return
	}
	api("GET /api/agents", func(w http.ResponseWriter, r *http.Request) {
		var list []engines.Detection
		if r.URL.Query().Get("refresh") == "1" {
			list = s.opts.Agents.Refresh(r.Context())
		} else {
			list = s.opts.Agents.List(r.Context())
		}
		writeJSON(w, http.StatusOK, map[string]any{"agents": list})
	})
}
