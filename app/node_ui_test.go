package app

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/node"
)

// TestUINode opens the Node view: its first-node page with no nodes, a node made through the API
// arriving live in the list, a message posted from the composer showing once in its DM, and the
// node's answer (with no model, an owner-only error notice). Pictures at 1280 and 390 px.
func TestNodeUI(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	press(t, ctx, `[data-nav="nodes"]`)
	waitFor(t, ctx, "the first-node page", `location.hash === '#/nodes' && document.querySelector('#nodes-empty')?.textContent.includes('Make your first node')`)
	screenshot(t, ctx, "node-empty-1280.png", 1280)
	screenshot(t, ctx, "node-empty-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// A node made elsewhere (the API, as the command line would) arrives in the open view.
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	var n struct {
		ID       string `json:"id"`
		Slug     string `json:"slug"`
		DMRoomID string `json:"dmRoomId"`
	}
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Scout", "role": "researcher"}, &n); err != nil {
		t.Fatal(err)
	}
	if n.DMRoomID == "" {
		t.Fatalf("the node came without its DM: %+v", n)
	}
	row := `#node-list [data-node-id="` + n.ID + `"]`
	waitFor(t, ctx, "the node in the list", `document.querySelector('`+row+`')?.textContent.includes('@`+n.Slug+`')`)

	press(t, ctx, row)
	waitFor(t, ctx, "its DM", `location.hash === '#/nodes/`+n.DMRoomID+`' && !!document.querySelector('.node-room[data-room-id="`+n.DMRoomID+`"] #node-input')`)
	typeInto(t, ctx, "#node-input", "Hello Scout, what can you do?\n")
	mine := `[...document.querySelectorAll('.node-msg.person:not([data-pending]) .node-bubble')].filter((b) => b.textContent === 'Hello Scout, what can you do?').length`
	waitFor(t, ctx, "the message, posted", mine+` === 1`)
	waitFor(t, ctx, "the composer, empty", `document.querySelector('#node-input').value.trim() === ''`)
	// With no model the node's turn ends in a notice only its owner sees.
	waitFor(t, ctx, "the node's answer", `!!document.querySelector('.node-notice[data-kind="error"], .node-msg.node:not([data-live]):not([data-kind])')`)

	var got struct {
		Messages []struct {
			Author string `json:"author"`
			Body   string `json:"body"`
		} `json:"messages"`
	}
	if err := c.do(ctx, "GET", "/api/node/rooms/"+n.DMRoomID+"/messages", nil, &got); err != nil {
		t.Fatal(err)
	}
	people := 0
	for _, m := range got.Messages {
		if m.Author == "person" {
			people++
		}
	}
	if people != 1 {
		t.Fatalf("the room holds %d messages from the person, want 1: %+v", people, got.Messages)
	}

	screenshot(t, ctx, "node-1280.png", 1280)
	// A phone: the room alone with a back button, then the list alone.
	screenshot(t, ctx, "node-390.png", 390)
	waitFor(t, ctx, "the list hidden on a phone", `getComputedStyle(document.querySelector('.node-side')).display === 'none'`)
	press(t, ctx, `.node-room-head .node-back`)
	waitFor(t, ctx, "the list on a phone", `location.hash === '#/nodes' && !!document.querySelector('`+row+`')`)
	screenshot(t, ctx, "node-list-390.png", 390)

	// The node's settings: its name changes, and the list follows.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, row)
	press(t, ctx, `.node-settings-open`)
	waitFor(t, ctx, "the settings", `!!document.querySelector('#node-settings #node-name')`)
	if err := setInput(ctx, "#node-name", "Scout Prime"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#node-save`)
	waitFor(t, ctx, "the new name in the list", `document.querySelector('`+row+`')?.textContent.includes('Scout Prime')`)
	screenshot(t, ctx, "node-settings-1280.png", 1280)

	// A blank node made in the page opens its DM; then a crew of both, led by the first.
	press(t, ctx, `#node-new`)
	press(t, ctx, `[data-template="blank"]`)
	if err := setInput(ctx, "#node-create-name", "Quill"); err != nil {
		t.Fatal(err)
	}
	if err := setInput(ctx, "#node-create-role", "writer"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#node-create`)
	waitFor(t, ctx, "the new node's DM", `document.querySelector('.node-room-title h2')?.textContent === 'Quill' && document.querySelectorAll('#node-list .node-row').length === 2`)
	press(t, ctx, `#crew-new`)
	if err := setInput(ctx, "#crew-title", "Press room"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `.crew-member input[value="`+n.ID+`"]`)
	press(t, ctx, `.crew-member input:not(:checked)`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const el = document.querySelector('#crew-lead'); el.value = '`+n.ID+`'; return el.dispatchEvent(new Event('change', { bubbles: true })); })()`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "node-crew-new-1280.png", 1280)
	press(t, ctx, `#crew-create`)
	waitFor(t, ctx, "the crew's room", `document.querySelector('.node-room[data-kind="crew"] .node-room-title h2')?.textContent === 'Press room' && !!document.querySelector('#crew-list .node-row')`)
	screenshot(t, ctx, "node-crew-1280.png", 1280)
	// What was read in the open DM stays read: no count on its row after the lists are read again.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the crew's room again", `!!document.querySelector('#crew-list .node-row') && !!document.querySelector('`+row+`')`)
	waitFor(t, ctx, "no unread count on a read DM", `!document.querySelector('`+row+` .node-unread')`)
	t.Log("node " + n.ID + " in room " + n.DMRoomID + ", " + strconv.Itoa(len(got.Messages)) + " messages")
}

// TestNodeUICard shows a node's card in two pages of its DM: Approve in one settles it in both
// (node.message.updated), and a card answered where this page did not hear of it says so (409).
func TestNodeUICard(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	var n struct {
		ID       string `json:"id"`
		DMRoomID string `json:"dmRoomId"`
	}
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Planner"}, &n); err != nil {
		t.Fatal(err)
	}
	// Two cards as a turn of the node leaves them (no model here writes one): each proposes a node.
	card := func(id, name string) {
		t.Helper()
		data := `{"type":"node_proposal","status":"pending","nodeId":"` + n.ID + `","lane":"conv:` + n.DMRoomID + `:p","private":true,"byOwner":true,"action":"node","node":{"name":"` + name + `","role":"designer"},"reason":"A designer would review the screens."}`
		now := time.Now().UTC().Format(time.RFC3339Nano)
		_, err := rt.store.Writer().Exec(`INSERT INTO node_messages (id, room_id, seq, author, author_node_id, kind, body, data, visible_to, created_at, updated_at)
			SELECT ?, id, next_seq, 'node', ?, 'approval', ?, ?, '["owner"]', ?, ? FROM node_rooms WHERE id = ?`,
			id, n.ID, "Planner asks to make a node: "+name+".", data, now, now, n.DMRoomID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.store.Writer().Exec(`UPDATE node_rooms SET next_seq = next_seq + 1 WHERE id = ?`, n.DMRoomID); err != nil {
			t.Fatal(err)
		}
	}
	card("msg_card_one", "Sketch")
	card("msg_card_two", "Pixel")

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	second := newTab(t, browser)
	ctx2, cancel2 := context.WithTimeout(second, browserTestTime)
	defer cancel2()
	for _, cx := range []context.Context{ctx, ctx2} {
		if err := chromedp.Do(cx, chromedp.Navigate(rt.URL+"/#/nodes/"+n.DMRoomID)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, cx, "the live stream", `document.querySelector('#live')?.dataset.state === 'live'`)
		waitFor(t, cx, "the cards", `document.querySelectorAll('.node-card[data-status="pending"] .card-approve').length === 2`)
	}
	screenshot(t, ctx, "node-card-1280.png", 1280)

	one := `[data-message-id="msg_card_one"]`
	press(t, ctx, one+` .card-approve`)
	for _, cx := range []context.Context{ctx, ctx2} {
		waitFor(t, cx, "the card, settled", `!!document.querySelector('`+one+` .node-card[data-status="approved"]') && !document.querySelector('`+one+` .card-approve')`)
	}
	waitFor(t, ctx2, "the new node in the second page's list", `[...document.querySelectorAll('#node-list .node-row')].some((r) => r.textContent.includes('Sketch'))`)

	// The second card is answered where these pages did not hear of it: its button says why.
	two := `[data-message-id="msg_card_two"]`
	if _, err := rt.store.Writer().Exec(`UPDATE node_messages SET data = json_set(data, '$.status', 'discarded') WHERE id = 'msg_card_two'`); err != nil {
		t.Fatal(err)
	}
	press(t, ctx2, two+` .card-approve`)
	waitFor(t, ctx2, "the 409's sentence", `document.querySelector('`+two+` .node-card-note')?.textContent.includes('already discarded')`)
	waitFor(t, ctx2, "the card as it is now", `!!document.querySelector('`+two+` .node-card[data-status="discarded"]') && !document.querySelector('`+two+` .card-approve')`)
	screenshot(t, ctx2, "node-card-390.png", 390)
}

// TestNodeUIStream plays a node's turn on the stream as the node package sends it (no model here
// writes one): its status, a tool chip, its text as it comes, Stop while it thinks; and a message
// in another node's DM counts as unread there.
func TestNodeUIStream(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	type made struct {
		ID       string `json:"id"`
		DMRoomID string `json:"dmRoomId"`
	}
	var n, other made
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Writer", "role": "writer"}, &n); err != nil {
		t.Fatal(err)
	}
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Tester", "role": "tester"}, &other); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/nodes/"+n.DMRoomID)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the live stream", `document.querySelector('#live')?.dataset.state === 'live'`)
	waitFor(t, ctx, "the DM", `!!document.querySelector('.node-room[data-room-id="`+n.DMRoomID+`"] .node-room-empty')`)

	send := func(kind events.Kind, room string, data any) {
		t.Helper()
		b, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		rt.bus.Publish(events.Event{At: time.Now(), Kind: kind, Subject: room, Data: b})
	}
	turn := "turn_live"
	frame := func(typ, text string, tool any) {
		f := map[string]any{"roomId": n.DMRoomID, "nodeId": n.ID, "turnId": turn, "private": false, "type": typ, "text": text}
		if tool != nil {
			f["tool"] = tool
		}
		send(node.KindFrame, n.DMRoomID, f)
	}
	send(node.KindStatus, n.DMRoomID, node.Status{RoomID: n.DMRoomID, NodeID: n.ID, State: "thinking", TurnID: turn})
	waitFor(t, ctx, "thinking", `document.querySelector('.node-status')?.textContent.includes('Writer is thinking') && !!document.querySelector('#node-stop')`)
	frame("tool", "", map[string]any{"callId": "c1", "name": "search_pages", "status": "running"})
	frame("text", "Looking **into** it", nil)
	frame("text", ", one moment.", nil)
	frame("tool", "", map[string]any{"callId": "c1", "name": "search_pages", "status": "done", "summary": "Found 2 pages"})
	waitFor(t, ctx, "the reply as it comes", `(() => {
		const r = document.querySelector('.node-msg[data-live]');
		return !!r && r.querySelector('.node-text strong')?.textContent === 'into' && r.textContent.includes('one moment.') &&
			r.querySelector('.node-chip[data-status="done"]')?.textContent.includes('Found 2 pages');
	})()`)

	// A message in the other node's DM: its row counts it.
	send(node.KindMessage, other.DMRoomID, node.Message{ID: "msg_elsewhere", RoomID: other.DMRoomID, Seq: 99, Author: "node", NodeID: other.ID, Kind: "text", Body: "The checks passed.", CreatedAt: time.Now()})
	waitFor(t, ctx, "the unread count", `document.querySelector('#node-list [data-node-id="`+other.ID+`"] .node-unread')?.textContent === '1'`)
	screenshot(t, ctx, "node-stream-1280.png", 1280)

	press(t, ctx, "#node-stop")
	waitFor(t, ctx, "the half reply gone", `!document.querySelector('.node-msg[data-live]')`)
	send(node.KindStatus, n.DMRoomID, node.Status{RoomID: n.DMRoomID, NodeID: n.ID, State: "idle", TurnID: turn})
	waitFor(t, ctx, "idle", `!document.querySelector('.node-status') && !document.querySelector('#node-stop')`)
	screenshot(t, ctx, "node-stream-390.png", 390)
}
