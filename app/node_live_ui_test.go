package app

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestNodeUILiveCard shows a node's live terminal card in its DM at a desktop's and a phone's
// width, and what Watch does for a card whose terminal is gone (as after a restart): the card ends
// and says so.
func TestNodeUILiveCard(t *testing.T) {
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
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Scout"}, &n); err != nil {
		t.Fatal(err)
	}
	// Live cards as live_view leaves them (no model here calls it): one open, one the node closed.
	card := func(id, session, status, extra string) {
		t.Helper()
		now := time.Now().UTC().Format(time.RFC3339Nano)
		data := `{"type":"live","kind":"terminal","status":"` + status + `","liveId":"` + session + `","title":"bash in scout","session":"` + session + `","startedAt":"` + now + `"` + extra + `}`
		_, err := rt.store.Writer().Exec(`INSERT INTO node_messages (id, room_id, seq, author, author_node_id, kind, body, data, visible_to, created_at, updated_at)
			SELECT ?, id, next_seq, 'node', ?, 'text', 'Live terminal: bash in scout', ?, '["owner"]', ?, ? FROM node_rooms WHERE id = ?`,
			id, n.ID, data, now, now, n.DMRoomID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.store.Writer().Exec(`UPDATE node_rooms SET next_seq = next_seq + 1 WHERE id = ?`, n.DMRoomID); err != nil {
			t.Fatal(err)
		}
	}
	card("msg_live_closed", "ts0000000000000001", "ended", `,"endedAt":"2026-01-01T00:00:00Z","endedBy":"node","endReason":"closed"`)
	card("msg_live_open", "ts0000000000000002", "open", ``)

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/nodes/"+n.DMRoomID)); err != nil {
		t.Fatal(err)
	}
	open := `[data-message-id="msg_live_open"]`
	waitFor(t, ctx, "the live cards", `!!document.querySelector('`+open+` .live-watch') &&
		document.querySelector('[data-message-id="msg_live_closed"] .live-ended')?.textContent === 'Closed by Scout.'`)
	screenshot(t, ctx, "node-live-card-1280.png", 1280)
	screenshot(t, ctx, "node-live-card-390.png", 390)
	waitFor(t, ctx, "no sideways scroll on a phone", `document.documentElement.scrollWidth <= innerWidth`)

	// Its terminal is gone: Watch says the view has ended, and the card ends.
	press(t, ctx, open+` .live-watch`)
	waitFor(t, ctx, "the card ended", `document.querySelector('`+open+` .live-card')?.dataset.status === 'ended' &&
		document.querySelector('`+open+` .node-card-note')?.textContent === 'This live view has ended.'`)
	screenshot(t, ctx, "node-live-ended-390.png", 390)
}
