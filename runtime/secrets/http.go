package secrets

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// secret_http (spec 002 §8.7.5, 003 §9): a request this computer makes with a saved secret put
// in where {{NAME}} appears in a header or the body, only to the secret's allowed origins, never
// in the address, without following redirects or keeping cookies. The answer (64 KB at most) has
// the value hidden as written and in its usual encodings. Each use is in the ledger, never the value.

// Limits of a secret_http call.
const (
	MaxHTTPAnswer  = 64 << 10
	maxHTTPBody    = 256 << 10
	httpTimeout    = 30 * time.Second
	hiddenValueTag = "[secret %s]"
)

// Used is the data of a [KindUsed] event.
type Used struct {
	Name   string `json:"name"`
	Origin string `json:"origin"`
	Method string `json:"method"`
	Status int    `json:"status"`
	By     string `json:"by"`            // who: a run's id or a node's handle
	How    string `json:"how,omitempty"` // secret_http, or git (a sign-in through the credential helper)
}

// HTTPRequest is secret_http's input.
type HTTPRequest struct {
	Ref     string            `json:"ref" jsonschema:"the secret's name"`
	URL     string            `json:"url" jsonschema:"the address, on one of the secret's allowed origins; never the secret in it"`
	Method  string            `json:"method,omitempty" jsonschema:"GET (default), POST, PUT, PATCH, DELETE or HEAD"`
	Headers map[string]string `json:"headers,omitempty" jsonschema:"headers; {{NAME}} in a value is replaced by the secret"`
	Body    string            `json:"body,omitempty" jsonschema:"the body; {{NAME}} in it is replaced by the secret"`
}

// HTTPAnswer is what came back, with the value hidden.
type HTTPAnswer struct {
	Status    int               `json:"status"`
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
	Truncated bool              `json:"truncated,omitempty"`
	Note      string            `json:"note,omitempty"`
}

var httpMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}

// HTTP makes req with its secret, as by (who, for the ledger), through client (nil: one made for
// it). It refuses, changing nothing, a secret with no allowed destination, another origin, the
// secret or its placeholder in the address, and a request that does not use the secret at all.
func (s *Store) HTTP(ctx context.Context, req HTTPRequest, by string, client *http.Client) (HTTPAnswer, error) {
	name := strings.TrimSpace(req.Ref)
	allow, err := s.allowOf(ctx, name)
	if err != nil {
		return HTTPAnswer{}, err
	}
	if len(allow) == 0 {
		return HTTPAnswer{}, problem.Invalid("The secret %s has no allowed destination; its owner allows one with `ensemble secrets set %s --allow https://…`.", name, name)
	}
	value, err := s.Get(ctx, name)
	if err != nil {
		return HTTPAnswer{}, err
	}
	origin, err := requestOrigin(req.URL, name, value)
	if err != nil {
		return HTTPAnswer{}, err
	}
	if !slices.Contains(allow, origin) {
		return HTTPAnswer{}, problem.Invalid("The secret %s may be sent only to %s, not %s.", name, strings.Join(allow, ", "), origin)
	}
	method := strings.ToUpper(cmp.Or(strings.TrimSpace(req.Method), "GET"))
	if !slices.Contains(httpMethods, method) {
		return HTTPAnswer{}, problem.Invalid("The method is one of %s, not %q.", strings.Join(httpMethods, ", "), req.Method)
	}
	if len(req.Body) > maxHTTPBody {
		return HTTPAnswer{}, problem.Invalid("The body is %d bytes; keep it under %d.", len(req.Body), maxHTTPBody)
	}
	hr, err := filledRequest(ctx, method, req, name, value)
	if err != nil {
		return HTTPAnswer{}, err
	}
	if client == nil {
		client = &http.Client{Timeout: httpTimeout}
	}
	c := *client
	c.Jar = nil
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(hr)
	if err != nil {
		return HTTPAnswer{}, fmt.Errorf("The request to %s did not go through: %s", origin, hideValue(errorText(err), name, value))
	}
	defer resp.Body.Close()
	a := answerOf(resp, name, value)
	if err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		return t.Emit(KindUsed, name, Used{Name: name, Origin: origin, Method: method, Status: resp.StatusCode, By: by, How: "secret_http"})
	}); err != nil {
		return HTTPAnswer{}, err
	}
	return a, nil
}

// allowOf is where a secret may be sent; a not-found problem when there is no such secret.
func (s *Store) allowOf(ctx context.Context, name string) ([]string, error) {
	var raw string
	if err := s.db.QueryRowContext(ctx, "SELECT allow FROM secrets WHERE name = ? AND kind = 'run'", name).Scan(&raw); err != nil {
		return nil, notFound(name)
	}
	var allow []string
	json.Unmarshal([]byte(raw), &allow)
	return allow, nil
}

// requestOrigin is the address's origin; the address may hold neither the secret nor its placeholder.
func requestOrigin(raw, name, value string) (string, error) {
	if strings.Contains(raw, "{{"+name+"}}") {
		return "", problem.Invalid("The secret goes in a header or the body, never in the address; put {{%s}} there.", name)
	}
	if containsValue(raw, value) {
		return "", problem.Invalid("The address holds the secret's value; it goes in a header or the body only.")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.User != nil {
		return "", problem.Invalid("%q is not an address to send a request to (https://host/path).", clip(raw))
	}
	origin, p := originProblem(u.Scheme + "://" + u.Host)
	if p != "" {
		return "", problem.New(problem.KindInvalid, p)
	}
	return origin, nil
}

// filledRequest is the request with {{NAME}} replaced in the headers and body; one that never
// uses the secret is refused.
func filledRequest(ctx context.Context, method string, req HTTPRequest, name, value string) (*http.Request, error) {
	ph := "{{" + name + "}}"
	used := strings.Contains(req.Body, ph)
	var body io.Reader
	if req.Body != "" {
		body = strings.NewReader(strings.ReplaceAll(req.Body, ph, value))
	}
	hr, err := http.NewRequestWithContext(ctx, method, strings.TrimSpace(req.URL), body)
	if err != nil {
		return nil, problem.Invalid("The request cannot be made: %s", err.Error())
	}
	for k, v := range req.Headers {
		if strings.EqualFold(k, "Host") || strings.EqualFold(k, "Cookie") {
			return nil, problem.Invalid("secret_http sets no %s header.", k)
		}
		used = used || strings.Contains(v, ph)
		hr.Header.Set(k, strings.ReplaceAll(v, ph, value))
	}
	if !used {
		return nil, problem.Invalid("Put {{%s}} where the secret goes, in a header (Authorization: Bearer {{%s}}) or the body.", name, name)
	}
	return hr, nil
}

// answerOf reads at most MaxHTTPAnswer bytes of the answer, drops its cookies and hides the value.
func answerOf(resp *http.Response, name, value string) HTTPAnswer {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxHTTPAnswer+1))
	a := HTTPAnswer{Status: resp.StatusCode, Headers: map[string]string{}}
	if len(b) > MaxHTTPAnswer {
		b, a.Truncated = b[:MaxHTTPAnswer], true
	}
	a.Body = hideValue(string(b), name, value)
	for k, vs := range resp.Header {
		if strings.EqualFold(k, "Set-Cookie") {
			continue
		}
		a.Headers[k] = hideValue(strings.Join(vs, ", "), name, value)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		a.Note = "It answered a redirect" + hideValue(locationOf(resp), name, value) + ", which secret_http does not follow."
	}
	return a
}

func locationOf(resp *http.Response) string {
	if l := resp.Header.Get("Location"); l != "" {
		return " to " + l
	}
	return ""
}

func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// valueForms are the forms the redactor hides (encodings) and, since an answer is read whole,
// hex and the part of the value's base64 that stays the same at each of the three offsets it can
// start at inside a longer encoded text.
func valueForms(v string) []string {
	forms := append(encodings(v), hex.EncodeToString([]byte(v)), strings.ToUpper(hex.EncodeToString([]byte(v))))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := 0; k < 3; k++ {
			if f := base64Middle(enc, v, k); len(f) >= 8 {
				forms = append(forms, f)
			}
		}
	}
	sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) }) // longest first
	return slices.Compact(forms)
}

// base64Middle is the part of v's base64 that is the same whatever comes before it, when v starts
// k bytes into a 3-byte group, and whatever follows it.
func base64Middle(enc *base64.Encoding, v string, k int) string {
	s := enc.WithPadding(base64.NoPadding).EncodeToString(append(make([]byte, k), v...))
	start := 0
	if k > 0 {
		start = 4 // the first group mixes the bytes before v with v's
	}
	end := (k + len(v)) / 3 * 4 // the last whole group; a partial one depends on what follows
	if end <= start || end > len(s) {
		return ""
	}
	return s[start:end]
}

func containsValue(s, value string) bool {
	for _, f := range valueForms(value) {
		if f != "" && strings.Contains(s, f) {
			return true
		}
	}
	return false
}

// hideValue replaces every form of value in s with the secret's name.
func hideValue(s, name, value string) string {
	if value == "" {
		return s
	}
	tag := fmt.Sprintf(hiddenValueTag, name)
	for _, f := range valueForms(value) {
		if f != "" {
			s = strings.ReplaceAll(s, f, tag)
		}
	}
	return s
}
