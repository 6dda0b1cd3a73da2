package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/store/storetest"
)

// jsonRoute is a route that reads a JSON body, as TestBadBodiesEveryRoute sends it bad ones.
type jsonRoute struct {
	pattern string // as registered: "POST /api/tasks"
	// path is a real path for the pattern: {id} is a record the fixture made, so a PATCH that got
	// through would change something the snapshot sees.
	path string
	// wrongType is a body whose real field has a value of the wrong JSON type.
	wrongType string
	// via is who sends it: "" the person (launch token), "key" an ens_ key with write access,
	// "phone" a phone through the relay (the only way /api/pair reads its body).
	via string
	// limit is the route's body cap: maxBody, or maxUploadBody for an upload.
	limit int
}

// bodylessRoutes are the POST, PUT and PATCH routes that read no body: an action on the path's
// record, or a link made fresh. A body sent to them is not read.
var bodylessRoutes = []string{
	"POST /api/signin-links",
	"POST /api/node/takeovers/{id}/extend",
	"POST /api/signout",
	"POST /api/trash/{kind}/{id}/restore",
	"POST /api/undo",
	"POST /api/redo",
	"POST /api/agent/jobs/{id}/stop",
	"POST /api/agent/jobs/{id}/held/{evidence}/release",
	"POST /api/node/evidence/{fileId}/release",
	"POST /api/node/evidence/{fileId}/discard",
	"POST /api/agent/jobs/{id}/held/{evidence}/discard",
	"POST /api/agent/jobs/{id}/pause",
	"POST /api/agent/jobs/{id}/resume",
	"POST /api/agent/profiles/{id}/star",
	"POST /api/node/nodes/{id}/promote",
	"POST /api/assistant/conversations/{id}/stop",
	"POST /api/assistant/proposals/{id}/apply",
	"POST /api/assistant/proposals/{id}/discard",
	"POST /api/assistant/conversations/{id}/apply-all",
	"POST /api/pair/links",
	"POST /api/pair/rotate",
	"POST /api/node/routines/{id}/run",
	"POST /api/node/routines/{id}/token",
	"POST /api/node/plans/{id}/stop",
}

// formRoutes read a body that is not JSON: the sign-in page's form (TestSigninCodeLifetime), a
// routine's webhook, whose body is any text kept for the node (TestRoutineWebhookOnce), and a file
// attached in a node's room, the file itself (TestAttachmentRoute).
var formRoutes = []string{"POST /auth/signin", "POST /api/node/hooks/routines/{id}", "POST /api/node/rooms/{id}/attachments"}

// TestBadBodiesEveryRoute sends every route that reads a JSON body malformed JSON, an unknown field,
// a wrong type, null, a list, a string, a body over its cap, and what encoding/json would take
// without a word: a field given twice, a field named in another case, text that is not UTF-8 and a
// NUL character; and the body as another media type. Each is answered 400 (415 for the media type)
// with one sentence, and the database is as it was: ledger groups, events and the route's own
// table. A media type in another case is JSON.
//
// The routes are read from the package's source (the mux does not list its patterns), so a new
// POST, PUT or PATCH route fails this test until it is in jsonRoutes or bodylessRoutes. Not here:
// /mcp/run and /mcp/assistant, the MCP servers of runs and assistant turns (JSON-RPC, on each
// one's own secret), whose packages check their messages.
func TestBadBodiesEveryRoute(t *testing.T) {
	f := fullFixture(t)
	phone := newRelayFixture(t, testRelayHost)

	ids := map[string]string{}
	for _, c := range []struct{ kind, path, body string }{
		{"task", "/api/tasks", `{"title":"Keep me"}`},
		{"project", "/api/projects", `{"name":"Keep me"}`},
		{"person", "/api/people", `{"name":"Keep Me"}`},
		{"repo", "/api/repos", `{"name":"keep","url":"https://example.com/keep.git"}`},
		{"page", "/api/pages", `{"title":"Keep me"}`},
		{"profile", "/api/agent/profiles", `{"name":"Keep me","agent":"standin","settings":{}}`},
	} {
		code, out := f.call(t, "POST", c.path, c.body)
		id, _ := out["id"].(string)
		if code != http.StatusCreated || id == "" {
			t.Fatalf("POST %s: %d %v", c.path, code, out)
		}
		ids[c.kind] = id
	}
	code, out := f.call(t, "POST", "/api/node/nodes", `{"name":"Keep me","slug":"keep"}`)
	if code != http.StatusCreated {
		t.Fatalf("POST /api/node/nodes: %d %v", code, out)
	}
	ids["node"], ids["room"] = out["id"].(string), out["dmRoomId"].(string)
	code, out = f.call(t, "POST", "/api/node/routines", `{"nodeId":"keep","instruction":"Keep me.","trigger":{"kind":"schedule","cron":"0 9 * * *"}}`)
	if code != http.StatusCreated {
		t.Fatalf("POST /api/node/routines: %d %v", code, out)
	}
	ids["routine"] = out["id"].(string)
	code, out = f.call(t, "POST", "/api/keys", `{"name":"editor","canWrite":true}`)
	key, _ := out["secret"].(string)
	if code != http.StatusCreated || key == "" {
		t.Fatalf("POST /api/keys: %d %v", code, out)
	}

	routes := []jsonRoute{
		{pattern: "POST /api/tasks", wrongType: `{"title":7}`},
		{pattern: "PATCH /api/tasks/{id}", path: "/api/tasks/" + ids["task"], wrongType: `{"labels":"a"}`},
		{pattern: "POST /api/projects", wrongType: `{"name":7}`},
		{pattern: "PATCH /api/projects/{id}", path: "/api/projects/" + ids["project"], wrongType: `{"name":true}`},
		{pattern: "POST /api/people", wrongType: `{"name":7}`},
		{pattern: "PATCH /api/people/{id}", path: "/api/people/" + ids["person"], wrongType: `{"email":7}`},
		{pattern: "POST /api/repos", wrongType: `{"name":7}`},
		{pattern: "PATCH /api/repos/{id}", path: "/api/repos/" + ids["repo"], wrongType: `{"url":[]}`},
		{pattern: "POST /api/pages", wrongType: `{"title":7}`},
		{pattern: "PATCH /api/pages/{id}", path: "/api/pages/" + ids["page"], wrongType: `{"parentId":7}`},
		{pattern: "POST /api/needs/{id}/answer", path: "/api/needs/need_nope/answer", wrongType: `{"option":"1"}`},
		{pattern: "POST /api/agent/assign", wrongType: `{"title":"x","agent":"standin","settings":"review"}`},
		{pattern: "POST /api/agent/profiles", wrongType: `{"name":"x","agent":"standin","settings":[]}`},
		{pattern: "PATCH /api/agent/profiles/{id}", path: "/api/agent/profiles/" + ids["profile"], wrongType: `{"settings":{"maxTurns":"5"}}`},
		{pattern: "POST /api/terminals", wrongType: `{"cols":80.5}`},
		{pattern: "POST /api/assistant/turn", wrongType: `{"text":["hi"]}`},
		{pattern: "PUT /api/assistant/settings", wrongType: `{"allowedWriteAreas":"tasks"}`},
		{pattern: "POST /api/assistant/apply", wrongType: `{"proposalIds":"p1"}`},
		{pattern: "POST /api/assistant/undo", wrongType: `{"group":1}`},
		{pattern: "POST /api/assistant/redo", wrongType: `{"group":1}`},
		{pattern: "PUT /api/assistant/skills/{name}", path: "/api/assistant/skills/keep", wrongType: `{"title":"Keep","body":7}`},
		{pattern: "POST /api/node/nodes", wrongType: `{"name":7}`},
		{pattern: "PATCH /api/node/nodes/{id}", path: "/api/node/nodes/" + ids["node"], wrongType: `{"name":7}`},
		{pattern: "POST /api/node/nodes/{id}/memory", path: "/api/node/nodes/" + ids["node"] + "/memory", wrongType: `{"content":7}`},
		{pattern: "POST /api/node/crews", wrongType: `{"title":"x","nodeIds":"keep"}`},
		{pattern: "PATCH /api/node/rooms/{id}", path: "/api/node/rooms/" + ids["room"], wrongType: `{"title":7}`},
		{pattern: "POST /api/node/rooms/{id}/nodes", path: "/api/node/rooms/" + ids["room"] + "/nodes", wrongType: `{"nodeId":7}`},
		{pattern: "POST /api/node/rooms/{id}/messages", path: "/api/node/rooms/" + ids["room"] + "/messages", wrongType: `{"body":7}`},
		{pattern: "POST /api/node/rooms/{id}/read", path: "/api/node/rooms/" + ids["room"] + "/read", wrongType: `{"seq":"1"}`},
		{pattern: "POST /api/node/rooms/{id}/stop", path: "/api/node/rooms/" + ids["room"] + "/stop", wrongType: `{"scope":7}`},
		{pattern: "POST /api/node/approvals/{messageId}", path: "/api/node/approvals/msg_nope", wrongType: `{"decision":7}`},
		{pattern: "POST /api/node/sudo/{messageId}", path: "/api/node/sudo/msg_nope", wrongType: `{"action":7}`},
		{pattern: "POST /api/node/secrets/{messageId}", path: "/api/node/secrets/msg_nope", wrongType: `{"allow":7}`},
		{pattern: "POST /api/node/logins/{messageId}", path: "/api/node/logins/msg_nope", wrongType: `{"action":7}`},
		{pattern: "PUT /api/node/preview-sites", path: "/api/node/preview-sites", wrongType: `{"sites":"a.com"}`},
		{pattern: "PUT /api/node/never-sites", path: "/api/node/never-sites", wrongType: `{"sites":"a.com"}`},
		{pattern: "POST /api/node/takeovers", path: "/api/node/takeovers", wrongType: `{"liveCardId":7}`},
		{pattern: "POST /api/node/takeovers/{id}/control", path: "/api/node/takeovers/tk_nope/control", wrongType: `{"on":"yes"}`},
		{pattern: "POST /api/node/takeovers/{id}/end", path: "/api/node/takeovers/tk_nope/end", wrongType: `{"done":"yes"}`},
		{pattern: "POST /api/node/sessions/{id}/control", path: "/api/node/sessions/job_nope/control", wrongType: `{"action":7}`},
		{pattern: "POST /api/node/sessions/{id}/queue", path: "/api/node/sessions/job_nope/queue", wrongType: `{"order":"a"}`},
		{pattern: "POST /api/node/sessions/{id}/hand-over", path: "/api/node/sessions/job_nope/hand-over", wrongType: `{"nodeId":7}`},
		{pattern: "POST /api/node/routines", wrongType: `{"instruction":7}`},
		{pattern: "PATCH /api/node/routines/{id}", path: "/api/node/routines/" + ids["routine"], wrongType: `{"notify":7}`},
		{pattern: "POST /api/keys", wrongType: `{"name":"x","canWrite":"yes"}`},
		{pattern: "POST /api/pair", wrongType: `{"secret":7}`, via: "phone"},
		{pattern: "PUT /api/settings/providers/{id}/key", path: "/api/settings/providers/anthropic/key", wrongType: `{"key":7}`},
		{pattern: "PUT /api/secrets/{name}", path: "/api/secrets/KEEP_ME", wrongType: `{"value":"v","allow":"https://example.com"}`},
		{pattern: "PATCH /api/secrets/{name}", path: "/api/secrets/KEEP_ME", wrongType: `{"env":"on"}`},
		{pattern: "PUT /api/settings/secrets", wrongType: `{"mode":"named","names":"KEEP_ME"}`},
		{pattern: "PUT /api/secrets/{name}/sealed", path: "/api/secrets/KEEP_ME/sealed", wrongType: `{"sealed":"box","decisionId":"d"}`},
		{pattern: "POST /api/bridge/brief", wrongType: `{"task":7}`, via: "key"},
		{pattern: "POST /api/bridge/context", wrongType: `{"item":7}`, via: "key"},
		{pattern: "POST /api/bridge/search", wrongType: `{"query":"x","kinds":"task"}`, via: "key"},
		{pattern: "POST /api/bridge/read", wrongType: `{"id":7}`, via: "key"},
		{pattern: "POST /api/bridge/tasks", wrongType: `{"limit":"5"}`, via: "key"},
		{pattern: "POST /api/bridge/projects", wrongType: `{"limit":"5"}`, via: "key"},
		{pattern: "POST /api/bridge/repos", wrongType: `{"limit":"5"}`, via: "key"},
		{pattern: "POST /api/bridge/people", wrongType: `{"limit":"5"}`, via: "key"},
		{pattern: "POST /api/bridge/skills", wrongType: `{"limit":"5"}`, via: "key"},
		{pattern: "POST /api/bridge/files", wrongType: `{"limit":"5"}`, via: "key"},
		{pattern: "POST /api/bridge/file", wrongType: `{"id":7}`, via: "key"},
		{pattern: "POST /api/bridge/actions", wrongType: `{"names":"hub_create_tasks"}`, via: "key"},
		{pattern: "POST /api/bridge/act/{name}", path: "/api/bridge/act/hub_create_project", wrongType: `{"input":"x"}`, via: "key"},
		{pattern: "POST /api/bridge/write/tasks", wrongType: `{"title":"x","people":"Ann"}`, via: "key"},
		{pattern: "PATCH /api/bridge/write/tasks/{id}", path: "/api/bridge/write/tasks/" + ids["task"], wrongType: `{"status":7}`, via: "key"},
		{pattern: "POST /api/bridge/write/files", wrongType: `{"filename":"a.txt","dataBase64":7}`, via: "key", limit: maxUploadBody},
	}

	// Every registered POST, PUT and PATCH route is in one list or the other, and nothing else is.
	registered := writeRoutes(t)
	var listed []string
	for _, r := range routes {
		listed = append(listed, r.pattern)
	}
	listed = append(listed, bodylessRoutes...)
	listed = append(listed, formRoutes...)
	for _, p := range registered {
		if !slices.Contains(listed, p) {
			t.Errorf("route %q is in neither jsonRoutes nor bodylessRoutes of this test; add it", p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(registered, p) {
			t.Errorf("route %q is listed in this test but not registered", p)
		}
	}

	for _, r := range routes {
		method, path, _ := strings.Cut(r.pattern, " ")
		if r.path != "" {
			path = r.path
		}
		limit := r.limit
		if limit == 0 {
			limit = maxBody
		}
		// The headers go after the route's own credential, so a test case's Content-Type wins.
		st, send := f.store, func(body string, hdr ...string) (int, map[string]any) { return f.call(t, method, path, body, hdr...) }
		switch r.via {
		case "key":
			send = func(body string, hdr ...string) (int, map[string]any) {
				return f.call(t, method, path, body, append([]string{"Authorization", "Bearer " + key}, hdr...)...)
			}
		case "phone":
			st = phone.store
			send = func(body string, hdr ...string) (int, map[string]any) {
				resp := phone.phone(t, method, path, body, "", append([]string{"Origin", origin}, hdr...)...)
				var out map[string]any
				json.NewDecoder(resp.Body).Decode(&out)
				return resp.StatusCode, out
			}
		}
		field := firstField(t, r.wrongType) // a field the route takes
		t.Run(r.pattern, func(t *testing.T) {
			for _, c := range []struct {
				name, body string
				says       string   // a word the sentence holds, where the class has its own
				hdr        []string // more request headers
				status     int      // 400 when zero
			}{
				{name: "malformed", body: `{"x":`},
				{name: "unknown field", body: `{"surelyNotAField":1}`},
				{name: "wrong type", body: r.wrongType},
				{name: "null", body: `null`},
				{name: "list", body: `[]`},
				{name: "string", body: `"s"`},
				{name: "oversized", body: `{"x":"` + strings.Repeat("x", limit) + `"}`},
				// encoding/json takes each of these without a word.
				{name: "duplicate field", body: fmt.Sprintf(`{%q:"a",%q:"b"}`, field, field), says: "given twice"},
				{name: "field in another case", body: fmt.Sprintf(`{%q:"a"}`, otherCase(field)), says: "case-sensitive"},
				{name: "invalid UTF-8", body: fmt.Sprintf("{%q:\"a\xffb\"}", field), says: "UTF-8"},
				{name: "escaped half a surrogate pair", body: fmt.Sprintf(`{%q:"\ud800"}`, field), says: "UTF-8"},
				{name: "NUL", body: fmt.Sprintf(`{%q:"a\u0000b"}`, field), says: "NUL"},
				// Media types compare without case: this one is JSON, so the body is read (and is bad).
				{name: "media type in another case", body: `{"x":`, says: "not valid JSON", hdr: []string{"Content-Type", "Application/JSON; charset=UTF-8"}},
				{name: "another media type", body: r.wrongType, says: "as JSON", hdr: []string{"Content-Type", "text/plain"}, status: http.StatusUnsupportedMediaType},
				{name: "another charset", body: r.wrongType, says: "as JSON", hdr: []string{"Content-Type", "application/json; charset=latin1"}, status: http.StatusUnsupportedMediaType},
			} {
				before := snapshot(t, st)
				code, out := send(c.body, c.hdr...)
				msg, _ := out["error"].(string)
				t.Logf("%s: %d %s", c.name, code, msg)
				want := c.status
				if want == 0 {
					want = http.StatusBadRequest
				}
				if code != want {
					t.Errorf("%s: %d %q, want %d", c.name, code, msg, want)
				}
				if !strings.Contains(msg, c.says) {
					t.Errorf("%s: error %q does not say %q", c.name, msg, c.says)
				}
				if problem := sentenceProblem(msg); problem != "" {
					t.Errorf("%s: error %q %s", c.name, msg, problem)
				}
				after := snapshot(t, st)
				for table, sum := range after {
					if before[table] != sum {
						t.Errorf("%s: table %s changed", c.name, table)
					}
				}
			}
		})
	}
}

// firstField is the first field name of a JSON object.
func firstField(t *testing.T, obj string) string {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(obj))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s is not an object", obj)
	}
	tok, err := d.Token()
	name, ok := tok.(string)
	if err != nil || !ok {
		t.Fatalf("%s has no field", obj)
	}
	return name
}

// otherCase is name with its first letter's case turned.
func otherCase(name string) string {
	first := name[:1]
	if up := strings.ToUpper(first); up != first {
		return up + name[1:]
	}
	return strings.ToLower(first) + name[1:]
}

// goTypeName is a Go type as encoding/json names it (jobs.SettingsInput, main.T).
var goTypeName = regexp.MustCompile(`\b[a-z][a-z0-9]*\.[A-Z]\w*`)

// goFieldName is a quoted field path holding a Go name, such as an embedded struct's ("AssignRequest.settings").
var goFieldName = regexp.MustCompile(`"([\w.]*\.)?[A-Z]\w*\.[\w.]*"`)

// sentenceProblem says why msg is not one sentence for a person, or "".
func sentenceProblem(msg string) string {
	switch {
	case strings.TrimSpace(msg) == "":
		return "is empty"
	case strings.ContainsAny(msg, "\r\n"):
		return "spans lines"
	case !strings.HasSuffix(msg, "."):
		return "does not end with a period"
	case strings.Contains(msg, "json:") || strings.Contains(msg, "Go value") || strings.Contains(msg, "Go struct"):
		return "passes on encoding/json's words"
	case goTypeName.MatchString(msg):
		return "names a Go type"
	case goFieldName.MatchString(msg):
		return "names a Go field"
	}
	for i := 0; i+2 < len(msg); i++ {
		if msg[i] == '.' && msg[i+1] == ' ' && msg[i+2] >= 'A' && msg[i+2] <= 'Z' {
			return "is more than one sentence"
		}
	}
	return ""
}

// snapshot sums every table's rows, so two snapshots differ when any row was added, removed or changed.
func snapshot(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, tb := range storetest.Dump(t, st.Reader()) {
		h := sha256.New()
		for _, vals := range tb.Rows {
			for i, c := range tb.Cols {
				if c == "last_used_at" || c == "last_seen_at" {
					vals[i] = nil // a key's or a device's use is recorded on each request; not a change
				}
			}
			fmt.Fprintf(h, "%q\n", vals)
		}
		out[name] = fmt.Sprintf("%d rows %s", len(tb.Rows), hex.EncodeToString(h.Sum(nil)))
	}
	return out
}

// writeRoutes are the POST, PUT and PATCH patterns of the routes the package registers, as the
// guard's walk reads them from its source (mountedPatterns).
func writeRoutes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range mountedPatterns(t) {
		if m, _, _ := strings.Cut(p, " "); m == "POST" || m == "PUT" || m == "PATCH" {
			out = append(out, p)
		}
	}
	return out
}
