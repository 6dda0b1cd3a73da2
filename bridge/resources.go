package bridge

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addResources adds the ensemble:// resources. A resource URI is an identifier, not permission to
// open local files; resources read the key's own space.
func (b *Bridge) addResources(s *mcp.Server) {
	static := []struct{ uri, name, method, route, desc string }{
		{"ensemble://tasks", "tasks", http.MethodPost, "tasks", "Open tasks"},
		{"ensemble://projects", "projects", http.MethodPost, "projects", "Projects"},
		{"ensemble://repos", "repos", http.MethodPost, "repos", "Tracked repositories"},
		{"ensemble://skills", "skills", http.MethodPost, "skills", "Current enabled skills"},
		{"ensemble://people", "people", http.MethodPost, "people", "People"},
		{"ensemble://deliverables", "deliverables", http.MethodGet, "deliverables", "Deliverables"},
		{"ensemble://meetings", "meetings", http.MethodGet, "meetings", "Upcoming meetings"},
		{"ensemble://decisions", "decisions", http.MethodGet, "decisions", "Needs me: pending decisions (read only)"},
		{"ensemble://today", "today", http.MethodGet, "today", "The person's day"},
		{"ensemble://gaps", "gaps", http.MethodGet, "gaps", "What the bridge cannot see or refuses to expose"},
	}
	for _, r := range static {
		s.AddResource(&mcp.Resource{URI: r.uri, Name: r.name, Description: r.desc, MIMEType: "application/json"},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				var body any
				if r.method == http.MethodPost {
					body = map[string]any{}
				}
				return b.resource(ctx, req.Params.URI, r.method, r.route, body)
			})
	}
	one := []struct{ tmpl, name, route, kind string }{
		{"ensemble://tasks/{id}", "task", "read", "task"},
		{"ensemble://projects/{id}", "project", "read", "project"},
		{"ensemble://repos/{id}", "repo", "read", "repo"},
		{"ensemble://people/{id}", "person", "read", "person"},
		{"ensemble://skills/{id}", "skill", "skills", ""},
	}
	for _, r := range one {
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: r.tmpl, Name: r.name, MIMEType: "application/json"},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				id := req.Params.URI[strings.LastIndex(req.Params.URI, "/")+1:]
				body := map[string]any{"id": id}
				if r.kind != "" {
					body["kind"] = r.kind
				}
				return b.resource(ctx, req.Params.URI, http.MethodPost, r.route, body)
			})
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "ensemble://items/{kind}/{id}", Name: "item", MIMEType: "application/json",
		Description: "One item in full: task, project, repo, person, page or document"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			rest := strings.TrimPrefix(req.Params.URI, "ensemble://items/")
			kind, id, ok := strings.Cut(rest, "/")
			if !ok || id == "" || strings.Contains(id, "/") {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return b.resource(ctx, req.Params.URI, http.MethodPost, "read", map[string]any{"kind": kind, "id": id})
		})
}

func (b *Bridge) resource(ctx context.Context, uri, method, route string, body any) (*mcp.ReadResourceResult, error) {
	out, err := b.call(ctx, method, route, "", body)
	if err != nil {
		if ae, ok := err.(*APIError); ok && ae.Status == http.StatusNotFound {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		// A JSON-RPC error with its code, and the sentence (not running, a key set up wrong) as
		// its message: a bare error would reach the client with code 0.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	raw, _ := json.Marshal(out)
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(raw)}}}, nil
}
