package app

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// testNode is a node made through the API.
type testNode struct {
	ID       string `json:"id"`
	DMRoomID string `json:"dmRoomId"`
}

// startNodeRuntime starts a runtime whose assistant and nodes talk to a scripted model, with
// cfg's Browser (nil: the real broker), and makes one node named name.
func startNodeRuntime(t *testing.T, ctx context.Context, cfg runtimeConfig, name string) (*Runtime, *client, *enginetest.Server, testNode) {
	t.Helper()
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	cfg.DataDir, cfg.Addr, cfg.Log = t.TempDir(), "127.0.0.1:0", slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := startRuntime(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	if err := c.do(ctx, "PUT", "/api/assistant/settings", map[string]any{"provider": "anthropic", "model": "claude-test"}, nil); err != nil {
		t.Fatal(err)
	}
	var n testNode
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": name}, &n); err != nil {
		t.Fatal(err)
	}
	return rt, c, model, n
}
