package jobs

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

// A run's MCP server has secret_http: the API gets the value, the agent sees it hidden; without
// the store the tool is not there.
func TestRunSecretHTTP(t *testing.T) {
	const value = "tok_run_secret_7d1e0c9b2a"
	var got string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Write([]byte(`{"echo":"` + strings.TrimPrefix(got, "Bearer ") + `"}`))
	}))
	defer api.Close()
	var sec *secrets.Store
	_, _, sess := runClient(t, nil, func(o *Options) {
		var err error
		sec, err = secrets.New(context.Background(), secrets.Options{DataDir: t.TempDir(), Store: o.Store, Writer: o.Writer})
		if err != nil {
			t.Fatal(err)
		}
		o.SecretHTTP = func(ctx context.Context, req secrets.HTTPRequest, by string) (secrets.HTTPAnswer, error) {
			return sec.HTTP(ctx, req, by, nil)
		}
	})
	if err := sec.Set(context.Background(), "API_TOKEN", secrets.Run, value, []string{api.URL}); err != nil {
		t.Fatal(err)
	}
	text, isErr := callText(t, sess, "secret_http", map[string]any{"ref": "API_TOKEN", "url": api.URL + "/me",
		"headers": map[string]string{"Authorization": "Bearer {{API_TOKEN}}"}})
	if isErr || got != "Bearer "+value || strings.Contains(text, value) || !strings.Contains(text, "[secret API_TOKEN]") {
		t.Fatalf("secret_http answered %q (error %v); the API got %q", text, isErr, got)
	}
	text, isErr = callText(t, sess, "secret_http", map[string]any{"ref": "API_TOKEN", "url": "https://elsewhere.example/",
		"headers": map[string]string{"Authorization": "Bearer {{API_TOKEN}}"}})
	if !isErr || !strings.Contains(text, "may be sent only to") {
		t.Fatalf("another origin: %q (error %v)", text, isErr)
	}
}
