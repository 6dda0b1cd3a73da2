package secrets

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

const canary = "sk_live_canary_4f9a1c27e3b8d605"

// secret_http puts the value only where its placeholder is, only to the secret's own origin, and
// hides it in the answer as written, JSON-quoted, URL-encoded, in hex and in base64 at any offset;
// cookies are dropped and each use is ledgered without the value.
func TestSecretHTTP(t *testing.T) {
	s, st := open(t, t.TempDir())
	var got string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		v := strings.TrimPrefix(got, "Bearer ")
		http.SetCookie(w, &http.Cookie{Name: "session", Value: v})
		w.Header().Set("X-Echo", v)
		for _, f := range []string{v, `"` + v + `"`, url.QueryEscape("a b" + v), hex.EncodeToString([]byte(v)),
			base64.StdEncoding.EncodeToString([]byte("x" + v + "yz")), base64.StdEncoding.EncodeToString([]byte("xy" + v)),
			base64.URLEncoding.EncodeToString([]byte(v))} {
			w.Write([]byte(f + "\n"))
		}
	}))
	defer api.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("the other server was reached") }))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusFound)
	}))
	defer redirect.Close()
	ctx := context.Background()
	if err := s.Set(ctx, "STRIPE_KEY", Run, canary, []string{api.URL, redirect.URL}); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "LOOSE_KEY", Run, "loose-value-123456", nil); err != nil {
		t.Fatal(err)
	}
	a, err := s.HTTP(ctx, HTTPRequest{Ref: "STRIPE_KEY", URL: api.URL + "/v1/charges", Headers: map[string]string{"Authorization": "Bearer {{STRIPE_KEY}}"}}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != "Bearer "+canary {
		t.Fatalf("the server got %q", got)
	}
	if a.Status != 200 || strings.Contains(a.Body, canary) || strings.Count(a.Body, "[secret STRIPE_KEY]") < 7 {
		t.Fatalf("the answer shows the value or misses a form:\n%s", a.Body)
	}
	for _, form := range valueForms(canary) {
		if strings.Contains(a.Body, form) {
			t.Fatalf("the answer holds the form %q", form)
		}
	}
	if _, ok := a.Headers["Set-Cookie"]; ok || a.Headers["X-Echo"] != "[secret STRIPE_KEY]" {
		t.Fatalf("the answer's headers: %v", a.Headers)
	}
	for _, c := range []struct {
		name string
		req  HTTPRequest
		want string
	}{
		{"another origin", HTTPRequest{Ref: "STRIPE_KEY", URL: other.URL, Headers: map[string]string{"Authorization": "{{STRIPE_KEY}}"}}, "may be sent only to"},
		{"placeholder in the address", HTTPRequest{Ref: "STRIPE_KEY", URL: api.URL + "/?k={{STRIPE_KEY}}"}, "never in the address"},
		{"value in the address", HTTPRequest{Ref: "STRIPE_KEY", URL: api.URL + "/?k=" + canary, Body: "{{STRIPE_KEY}}"}, "holds the secret's value"},
		{"no placeholder", HTTPRequest{Ref: "STRIPE_KEY", URL: api.URL}, "Put {{STRIPE_KEY}} where the secret goes"},
		{"no destination", HTTPRequest{Ref: "LOOSE_KEY", URL: api.URL, Body: "{{LOOSE_KEY}}"}, "has no allowed destination"},
		{"unknown secret", HTTPRequest{Ref: "NOPE", URL: api.URL, Body: "{{NOPE}}"}, "NOPE"},
		{"a cookie header", HTTPRequest{Ref: "STRIPE_KEY", URL: api.URL, Headers: map[string]string{"Cookie": "{{STRIPE_KEY}}"}}, "no Cookie header"},
		{"bad method", HTTPRequest{Ref: "STRIPE_KEY", URL: api.URL, Method: "TRACE", Body: "{{STRIPE_KEY}}"}, "The method is one of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := s.HTTP(ctx, c.req, "test", nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want a refusal saying %q", err, c.want)
			}
		})
	}
	r, err := s.HTTP(ctx, HTTPRequest{Ref: "STRIPE_KEY", URL: redirect.URL, Headers: map[string]string{"Authorization": "Bearer {{STRIPE_KEY}}"}}, "test", nil)
	if err != nil || r.Status != http.StatusFound || !strings.Contains(r.Note, "does not follow") {
		t.Fatalf("a redirect: %+v, %v; want its answer, not followed", r, err)
	}
	var uses int
	st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = 'secret.use'").Scan(&uses)
	var leaked int
	st.Reader().QueryRow("SELECT count(*) FROM events WHERE data LIKE ?", "%"+canary+"%").Scan(&leaked)
	if uses != 2 || leaked != 0 {
		t.Fatalf("%d secret.use events (want 2), %d holding the value (want 0)", uses, leaked)
	}
}

func TestBase64Middle(t *testing.T) {
	v := "abcdefghijklmnop"
	for k := 0; k < 3; k++ {
		mid := base64Middle(base64.StdEncoding, v, k)
		for _, before := range []string{"", "1", "12", "123", "1234"} {
			if len(before)%3 != k {
				continue
			}
			for _, after := range []string{"", "x", "xy", "xyz"} {
				enc := base64.StdEncoding.EncodeToString([]byte(before + v + after))
				if !strings.Contains(enc, mid) {
					t.Fatalf("offset %d: %q is not in %q (%q+v+%q)", k, mid, enc, before, after)
				}
			}
		}
	}
}
