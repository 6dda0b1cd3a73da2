package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// nodeFixture is the API with Ensemble Node over a real database; the turn engine is not started,
// so messages queue their turns and nothing answers them.
type nodeFixture struct {
	*fixture
	nodes *node.Service
	w     *ledger.Writer
}

func newNodeFixture(t *testing.T) *nodeFixture {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	nd := needs.New(st, w)
	asst := assistant.New(assistant.Config{Records: rec, Store: st, Writer: w, Needs: nd, Log: slog.New(slog.DiscardHandler),
		Providers: func(p, base string) (models.Provider, error) {
			return nil, fmt.Errorf("No model is reached in this test.")
		}})
	nodes := node.New(node.Config{Store: st, Writer: w, Bus: bus, Assistant: asst, Records: rec, Needs: nd, Log: slog.New(slog.DiscardHandler)})
	tok := NewLaunchToken()
	a := New(Options{Version: "test", Token: tok, Keepalive: time.Minute, Assistant: asst, Needs: nd, Nodes: nodes},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); nodes.Close(); asst.Close(context.Background()); bus.Close(); st.Close() })
	return &nodeFixture{fixture: &fixture{srv: srv, api: a, store: st, bus: bus, token: tok}, nodes: nodes, w: w}
}

// mustCall is call that fails the test unless the answer has the status wanted.
func (f *nodeFixture) mustCall(t *testing.T, want int, method, path, body string) map[string]any {
	t.Helper()
	code, out := f.call(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s = %d %v, want %d", method, path, code, out, want)
	}
	return out
}

func TestNodeRoutesRefuse(t *testing.T) {
	f := newNodeFixture(t)
	ada := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Ada","slug":"ada","role":"researcher"}`)
	if ada["name"] != "Ada" || ada["slug"] != "ada" || ada["role"] != "researcher" || ada["status"] != "active" || ada["dmRoomId"] == "" {
		t.Fatalf("created %v", ada)
	}
	dm := ada["dmRoomId"].(string)
	for _, c := range []struct {
		name, method, path, body string
		want                     int
		sentence                 string
	}{
		{"handle taken", "POST", "/api/node/nodes", `{"name":"Ada Two","slug":"ada"}`, 409, "Another of your nodes is already @ada. Pick another handle."},
		{"name taken", "POST", "/api/node/nodes", `{"name":"ada"}`, 409, "You already have a node named ada. Pick another name."},
		{"handle everyone", "POST", "/api/node/nodes", `{"name":"All","slug":"everyone"}`, 400, "@everyone is kept for mentioning every node; pick another handle."},
		{"no name", "POST", "/api/node/nodes", `{}`, 400, "Give the node a name, or pick a template."},
		{"unknown template", "POST", "/api/node/nodes", `{"templateId":"nope"}`, 400, `There is no node template "nope".`},
		{"unknown field", "POST", "/api/node/nodes", `{"name":"x","colour":"red"}`, 400, `Unknown field "colour".`},
		{"oversized", "POST", "/api/node/nodes", `{"name":"` + strings.Repeat("n", maxBody) + `"}`, 400, "The body is larger than 1024 KB."},
		{"patch nothing", "PATCH", "/api/node/nodes/ada", `{}`, 400, "Say what to change: name, slug, role, charter, avatar, provider, model, effort, status or autonomy."},
		{"patch bad status", "PATCH", "/api/node/nodes/ada", `{"status":"asleep"}`, 400, `A node's status is active or paused, not "asleep".`},
		{"no such node", "GET", "/api/node/nodes/nobody", ``, 404, `There is no node "nobody".`},
		{"empty memory", "POST", "/api/node/nodes/ada/memory", `{"content":" "}`, 400, "A memory is 1 to 500 characters."},
		{"forget unknown", "DELETE", "/api/node/nodes/ada/memory/mem_nope", ``, 404, `Ada has no memory "mem_nope".`},
		{"turns bad limit", "GET", "/api/node/nodes/ada/turns?limit=x", ``, 400, "limit must be a whole number, 0 or more."},
		{"bad after", "GET", "/api/node/rooms/" + dm + "/messages?after=-1", ``, 400, "after must be a whole number, 0 or more."},
		{"bad before", "GET", "/api/node/rooms/" + dm + "/messages?before=ten", ``, 400, "before must be a whole number, 0 or more."},
		{"bad author", "GET", "/api/node/rooms/" + dm + "/messages?author=cats", ``, 400, `author is people or nodes, not "cats".`},
		{"empty message", "POST", "/api/node/rooms/" + dm + "/messages", `{"body":"  "}`, 400, "Write a message first."},
		{"no such room", "GET", "/api/node/rooms/room_nope", ``, 404, `There is no room "room_nope".`},
		{"read without seq", "POST", "/api/node/rooms/" + dm + "/read", `{}`, 400, `Say up to which message is read: {"seq": 12}.`},
		{"stop bad scope", "POST", "/api/node/rooms/" + dm + "/stop", `{"scope":"house"}`, 400, `scope is room or all, not "house".`},
		{"rename a DM", "PATCH", "/api/node/rooms/" + dm, `{"title":"x"}`, 400, "Only a crew is renamed or led here; a DM follows its node's name."},
		{"delete a DM", "DELETE", "/api/node/rooms/" + dm, ``, 400, "A DM goes with its node; delete the node to remove it."},
		{"crew without nodes", "POST", "/api/node/crews", `{"title":"Empty","nodeIds":[]}`, 400, "A crew has 1 to 24 nodes."},
		{"crew without nodeId", "POST", "/api/node/rooms/" + dm + "/nodes", `{}`, 400, `Say which node joins the crew: {"nodeId": "…"}.`},
		{"empty search", "GET", "/api/node/search?q=", ``, 400, "Say what to search for."},
		{"no such message", "GET", "/api/node/messages/msg_nope", ``, 404, `There is no message "msg_nope".`},
		{"card unknown", "POST", "/api/node/approvals/msg_nope", `{"decision":"approve"}`, 404, `There is no message "msg_nope".`},
		{"card bad decision", "POST", "/api/node/approvals/msg_nope", `{"decision":"maybe"}`, 400, `decision is approve or discard (once, mission or always for a computer card), not "maybe".`},
		{"export unknown", "GET", "/api/node/rooms/room_nope/export", ``, 404, `There is no room "room_nope".`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, body := f.call(t, c.method, c.path, c.body)
			if got != c.want || body["error"] != c.sentence {
				t.Fatalf("got %d %q, want %d %q", got, body["error"], c.want, c.sentence)
			}
		})
	}
}

func TestNodeRoutesNodesAndCrews(t *testing.T) {
	f := newNodeFixture(t)
	boot := f.mustCall(t, 200, "GET", "/api/node/bootstrap", "")
	if l := boot["limits"].(map[string]any); l["nodes"] != 24.0 || l["crewNodes"] != 24.0 || l["memories"] != 200.0 {
		t.Fatalf("limits %v", l)
	}
	if len(boot["nodes"].([]any)) != 0 || len(boot["rooms"].([]any)) != 0 || boot["templates"] == nil {
		t.Fatalf("bootstrap of nothing %v", boot)
	}
	ada := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Ada","slug":"ada","role":"manager"}`)
	// Without a slug the handle is made from the name (by node.Slugify, stubbed for now).
	bob := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Bob"}`)
	if bob["slug"] == "" {
		t.Errorf("no handle made from the name: %v", bob)
	}
	if bob["role"] != "assistant" {
		t.Errorf("default role %v", bob["role"])
	}
	list := f.mustCall(t, 200, "GET", "/api/node/nodes", "")
	if ns := list["nodes"].([]any); len(ns) != 2 || ns[0].(map[string]any)["name"] != "Ada" || list["seq"] == nil {
		t.Fatalf("list %v", list)
	}
	adaID := ada["id"].(string)
	// By id or by handle.
	if got := f.mustCall(t, 200, "GET", "/api/node/nodes/"+adaID, ""); got["name"] != "Ada" {
		t.Fatalf("by id %v", got)
	}
	renamed := f.mustCall(t, 200, "PATCH", "/api/node/nodes/@ada", `{"name":"Ada L","role":"lead"}`)
	if renamed["name"] != "Ada L" || renamed["role"] != "lead" {
		t.Fatalf("patched %v", renamed)
	}
	paused := f.mustCall(t, 200, "PATCH", "/api/node/nodes/"+adaID, `{"status":"paused"}`)
	if paused["status"] != "paused" {
		t.Fatalf("paused %v", paused)
	}
	f.mustCall(t, 200, "PATCH", "/api/node/nodes/"+adaID, `{"status":"active"}`)

	// Memory.
	mem := f.mustCall(t, 201, "POST", "/api/node/nodes/"+adaID+"/memory", `{"content":"Prefers short answers"}`)
	got := f.mustCall(t, 200, "GET", "/api/node/nodes/"+adaID+"/memory", "")
	if ms := got["memories"].([]any); len(ms) != 1 || ms[0].(map[string]any)["content"] != "Prefers short answers" {
		t.Fatalf("memory %v", got)
	}
	f.mustCall(t, 204, "DELETE", "/api/node/nodes/"+adaID+"/memory/"+mem["id"].(string), "")
	if got := f.mustCall(t, 200, "GET", "/api/node/nodes/"+adaID+"/memory", ""); len(got["memories"].([]any)) != 0 {
		t.Fatalf("memory after forget %v", got)
	}
	if got := f.mustCall(t, 200, "GET", "/api/node/nodes/"+adaID+"/turns?limit=5", ""); got["turns"] == nil {
		t.Fatalf("turns %v", got)
	}

	// A crew: the set lead answers, else the manager.
	crew := f.mustCall(t, 201, "POST", "/api/node/crews", `{"title":"Launch","nodeIds":["`+adaID+`"]}`)
	if crew["kind"] != "crew" || crew["lead"] != adaID || len(crew["members"].([]any)) != 1 {
		t.Fatalf("crew %v", crew)
	}
	roomID := crew["id"].(string)
	if code, out := f.call(t, "POST", "/api/node/crews", `{"title":"launch","nodeIds":["`+adaID+`"]}`); code != 409 {
		t.Fatalf("same title %d %v", code, out)
	}
	added := f.mustCall(t, 200, "POST", "/api/node/rooms/"+roomID+"/nodes", `{"nodeId":"`+bob["id"].(string)+`"}`)
	if len(added["members"].([]any)) != 2 {
		t.Fatalf("added %v", added)
	}
	led := f.mustCall(t, 200, "PATCH", "/api/node/rooms/"+roomID, `{"title":"Launch day","leadNodeId":"`+bob["id"].(string)+`"}`)
	if led["title"] != "Launch day" || led["lead"] != bob["id"] {
		t.Fatalf("patched crew %v", led)
	}
	removed := f.mustCall(t, 200, "DELETE", "/api/node/rooms/"+roomID+"/nodes/"+bob["id"].(string), "")
	if len(removed["members"].([]any)) != 1 || removed["lead"] != adaID {
		t.Fatalf("removed %v", removed)
	}
	rooms := f.mustCall(t, 200, "GET", "/api/node/rooms", "")
	if len(rooms["rooms"].([]any)) != 3 { // two DMs and the crew
		t.Fatalf("rooms %v", rooms)
	}
	f.mustCall(t, 200, "GET", "/api/node/rooms/"+roomID, "")
	f.mustCall(t, 204, "DELETE", "/api/node/rooms/"+roomID, "")
	f.mustCall(t, 404, "GET", "/api/node/rooms/"+roomID, "")

	f.mustCall(t, 204, "DELETE", "/api/node/nodes/"+bob["id"].(string), "")
	f.mustCall(t, 404, "GET", "/api/node/nodes/"+bob["id"].(string), "")
	if got := f.mustCall(t, 200, "GET", "/api/node/bootstrap", ""); len(got["nodes"].([]any)) != 1 || len(got["rooms"].([]any)) != 1 {
		t.Fatalf("bootstrap after delete %v", got)
	}
}

func TestNodeRoutesMessages(t *testing.T) {
	f := newNodeFixture(t)
	ada := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Ada","slug":"ada"}`)
	dm := ada["dmRoomId"].(string)
	base := "/api/node/rooms/" + dm + "/messages"
	first := f.mustCall(t, 201, "POST", base, `{"body":"Find the flight times","clientId":"c1"}`)
	if first["author"] != "person" || first["kind"] != "text" || first["seq"] == nil {
		t.Fatalf("posted %v", first)
	}
	// A resend with the same clientId is the first copy, answered 200.
	again := f.mustCall(t, 200, "POST", base, `{"body":"Find the flight times","clientId":"c1"}`)
	if again["id"] != first["id"] {
		t.Fatalf("resend made %v, want %v", again["id"], first["id"])
	}
	f.mustCall(t, 201, "POST", base, `{"body":"and the hotel prices"}`)
	third := f.mustCall(t, 201, "POST", base, `{"body":"thanks"}`)

	all := f.mustCall(t, 200, "GET", base, "")["messages"].([]any)
	if len(all) != 3 {
		t.Fatalf("messages %v", all)
	}
	seq := func(m any) float64 { return m.(map[string]any)["seq"].(float64) }
	s1 := int(seq(all[0]))
	after := f.mustCall(t, 200, "GET", fmt.Sprintf("%s?after=%d", base, s1), "")["messages"].([]any)
	if len(after) != 2 || seq(after[0]) != seq(all[1]) {
		t.Fatalf("after %d: %v", s1, after)
	}
	before := f.mustCall(t, 200, "GET", fmt.Sprintf("%s?before=%d&limit=1", base, int(seq(all[2]))), "")["messages"].([]any)
	if len(before) != 1 || seq(before[0]) != seq(all[1]) {
		t.Fatalf("before: %v", before)
	}
	if people := f.mustCall(t, 200, "GET", base+"?author=nodes", "")["messages"].([]any); len(people) != 0 {
		t.Fatalf("by nodes: %v", people)
	}

	f.mustCall(t, 204, "POST", "/api/node/rooms/"+dm+"/read", fmt.Sprintf(`{"seq":%d}`, int(seq(all[2]))))
	if room := f.mustCall(t, 200, "GET", "/api/node/rooms/"+dm, ""); room["readSeq"] != seq(all[2]) || room["unread"] != 0.0 {
		t.Fatalf("read marker %v", room)
	}

	found := f.mustCall(t, 200, "GET", "/api/node/search?q=HOTEL&roomId="+dm, "")["messages"].([]any)
	if len(found) != 1 || found[0].(map[string]any)["body"] != "and the hotel prices" {
		t.Fatalf("search %v", found)
	}

	id := third["id"].(string)
	if got := f.mustCall(t, 200, "GET", "/api/node/messages/"+id, ""); got["body"] != "thanks" {
		t.Fatalf("message %v", got)
	}
	f.mustCall(t, 204, "DELETE", "/api/node/messages/"+id, "")
	if got := f.mustCall(t, 200, "GET", "/api/node/messages/"+id, ""); got["deleted"] != true || got["body"] != "" {
		t.Fatalf("deleted message %v", got)
	}

	stopped := f.mustCall(t, 200, "POST", "/api/node/rooms/"+dm+"/stop", "")
	if stopped["kind"] != "status" || stopped["private"] != true {
		t.Fatalf("stop %v", stopped)
	}
	f.mustCall(t, 200, "POST", "/api/node/rooms/"+dm+"/stop", `{"scope":"all"}`)

	req, _ := http.NewRequest("GET", f.srv.URL+"/api/node/rooms/"+dm+"/export", nil)
	req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/markdown; charset=utf-8" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename=Ada.md` ||
		!strings.HasPrefix(string(md), "# Ada\n") || !strings.Contains(string(md), "Find the flight times") || !strings.Contains(string(md), "_(deleted)_") {
		t.Fatalf("export %d %v\n%s", resp.StatusCode, resp.Header, md)
	}
}

// TestNodeRoutesCardAnsweredOnce: a pending card (written as a node's turn would write it; no
// model runs here) is answered once; a second answer is 409 with the sentence, and the card is
// listed pending only until it is answered.
func TestNodeRoutesCardAnsweredOnce(t *testing.T) {
	f := newNodeFixture(t)
	ada := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Ada","slug":"ada"}`)
	dm, adaID := ada["dmRoomId"].(string), ada["id"].(string)
	cardID := ledger.NewID("msg_")
	err := f.w.Exec(context.Background(), func(t *ledger.Tx) error {
		var seq int64
		now := store.Stamp(t.Now())
		if err := t.QueryRowContext(t.Context(), "UPDATE node_rooms SET next_seq = next_seq + 1 WHERE id = ? RETURNING next_seq - 1", dm).Scan(&seq); err != nil {
			return err
		}
		data := fmt.Sprintf(`{"type":"crew_add","status":"pending","nodeId":%q,"turnId":"turn_x","lane":"conv:%s","roomId":"room_nope","addNodeId":%q,"handle":"ada"}`, adaID, dm, adaID)
		_, err := t.ExecContext(t.Context(), `INSERT INTO node_messages (id, room_id, seq, author, author_node_id, kind, body, data, created_at, updated_at)
			VALUES (?, ?, ?, 'node', ?, 'approval', 'Ada asks to join a crew.', ?, ?, ?)`, cardID, dm, seq, adaID, data, now, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pending := f.mustCall(t, 200, "GET", "/api/node/approvals", "")["cards"].([]any)
	if len(pending) != 1 || pending[0].(map[string]any)["id"] != cardID {
		t.Fatalf("pending %v", pending)
	}
	settled := f.mustCall(t, 200, "POST", "/api/node/approvals/"+cardID, `{"decision":"discard"}`)
	data := settled["data"].(map[string]any)
	if data["status"] != "discarded" || data["answeredBy"] != "cli" { // the launch token is the command line's
		t.Fatalf("settled %v", settled)
	}
	code, out := f.call(t, "POST", "/api/node/approvals/"+cardID, `{"decision":"approve"}`)
	if code != 409 || out["error"] != "This card was already discarded." {
		t.Fatalf("second answer %d %v", code, out)
	}
	if pending := f.mustCall(t, 200, "GET", "/api/node/approvals", "")["cards"].([]any); len(pending) != 0 {
		t.Fatalf("pending after the answer %v", pending)
	}
	// A message that is not a card.
	msg := f.mustCall(t, 201, "POST", "/api/node/rooms/"+dm+"/messages", `{"body":"hello"}`)
	if code, out := f.call(t, "POST", "/api/node/approvals/"+msg["id"].(string), `{"decision":"approve"}`); code != 400 || out["error"] != "That message is not a card." {
		t.Fatalf("not a card %d %v", code, out)
	}
}
