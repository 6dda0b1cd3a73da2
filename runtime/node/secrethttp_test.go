package node

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// A node's secret_http reaches the API with the value, and nothing the model is sent afterwards
// holds it.
func TestNodeSecretHTTP(t *testing.T) {
	const value = "ghp_nodecanary_91c3e7a0d2b4"
	var got string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Write([]byte(`{"login":"ada","token":"` + strings.TrimPrefix(got, "token ") + `"}`))
	}))
	defer api.Close()
	var sec *secrets.Store
	f := newFixture(t, func(c *Config) {
		var err error
		if sec, err = secrets.New(context.Background(), secrets.Options{DataDir: t.TempDir(), Store: c.Store, Writer: c.Writer}); err != nil {
			t.Fatal(err)
		}
		c.SecretHTTP = func(ctx context.Context, req secrets.HTTPRequest, by string) (secrets.HTTPAnswer, error) {
			return sec.HTTP(ctx, req, by, nil)
		}
	})
	if err := sec.Set(context.Background(), "GH_API", secrets.Run, value, []string{api.URL}); err != nil {
		t.Fatal(err)
	}
	n := f.node("Scout")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolSecretHTTP, map[string]any{"ref": "GH_API", "url": api.URL + "/user", "headers": map[string]string{"Authorization": "token {{GH_API}}"}}).
			When(enginetest.Match{LastUserContains: "who am I"}),
		enginetest.Say("You are ada.").When(enginetest.Match{ToolResult: &yes}),
	)
	f.post(n.DMRoomID, "Use my GH_API secret: who am I on the API?")
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	f.settle()
	if got != "token "+value {
		t.Fatalf("the API got %q", got)
	}
	for _, r := range f.model.Requests() {
		if strings.Contains(string(r.Body), value) {
			t.Fatal("a model request holds the secret's value")
		}
	}
	var leaked int
	f.st.Reader().QueryRow(`SELECT (SELECT count(*) FROM events WHERE data LIKE ?1) + (SELECT count(*) FROM node_messages WHERE body LIKE ?1 OR data LIKE ?1)
		+ (SELECT count(*) FROM assistant_messages WHERE text LIKE ?1 OR history LIKE ?1)`, "%"+value+"%").Scan(&leaked)
	if leaked != 0 {
		t.Fatalf("%d rows hold the secret's value", leaked)
	}
}
