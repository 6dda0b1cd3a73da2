package app

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestNodeUIWorkCards shows a node's session card and plan card as its runs and missions leave
// them (no agent or model here writes one): the session's state, settings, running and queued
// messages with their controls, and a plan's steps with outcomes, holds and a repaired attempt.
// Steering a session that is gone says why in the card.
func TestNodeUIWorkCards(t *testing.T) {
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
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Builder", "templateId": "developer"}, &n); err != nil {
		t.Fatal(err)
	}
	other := map[string]string{}
	for _, name := range []string{"Tester", "Writer"} {
		var o struct {
			ID string `json:"id"`
		}
		if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": name}, &o); err != nil {
			t.Fatal(err)
		}
		other[name] = o.ID
	}
	put := func(id, kind, body, data string) {
		t.Helper()
		now := time.Now().UTC().Format(time.RFC3339Nano)
		_, err := rt.store.Writer().Exec(`INSERT INTO node_messages (id, room_id, seq, author, author_node_id, kind, body, data, visible_to, created_at, updated_at)
			SELECT ?, id, next_seq, 'node', ?, ?, ?, ?, '["owner"]', ?, ? FROM node_rooms WHERE id = ?`,
			id, n.ID, kind, body, data, now, now, n.DMRoomID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.store.Writer().Exec(`UPDATE node_rooms SET next_seq = next_seq + 1 WHERE id = ?`, n.DMRoomID); err != nil {
			t.Fatal(err)
		}
	}
	put("msg_run", "run", "Add a dark mode toggle", `{"jobId":"job_gone","taskId":"tsk_x","title":"Add a dark mode toggle",
		"settings":{"requested":{"agent":"claude"},"resolved":{"agent":"claude","model":"sonnet","effort":"high"},"observed":{"model":"claude-sonnet-4"}},
		"session":{"id":"ses_gone","status":"working","agent":"Claude Code","folder":"~/code/site",
			"running":{"jobId":"job_gone","title":"Add a dark mode toggle","status":"running"},
			"queue":[{"id":"nrn_q1","title":"Then update the screenshots in the README","position":1}]}}`)
	// As runtime/node's planCard writes it: the state, steps by node id, the requirement ledger.
	put("msg_plan", "plan", "Ship dark mode on the site: 1 of 3 steps done (running).", `{"missionId":"msn_1","goal":"Ship dark mode on the site","state":"running","revision":1,
		"steps":[{"id":"build","nodeId":"`+n.ID+`","kind":"build","brief":"Add the toggle and the dark palette","after":[],"status":"done","outcome":"done","held":false,
			"attempts":[{"n":1,"reason":"first","outcome":"done"},{"n":2,"reason":"repair","outcome":"done"}]},
			{"id":"check","nodeId":"`+other["Tester"]+`","kind":"verify","brief":"Check contrast and the toggle's state after a reload","after":["build"],"status":"working","outcome":"unknown","held":false,"attempts":[]},
			{"id":"docs","nodeId":"`+other["Writer"]+`","kind":"write","brief":"Say how in the README","after":["check"],"status":"waiting","outcome":"unknown","held":true,"heldBy":["check"],"attempts":[]}],
		"requirements":{"r1":"in_progress"}}`)

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/nodes/"+n.DMRoomID)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the session card", `!!document.querySelector('.session-card[data-status="working"] .session-steer')`)
	waitFor(t, ctx, "the queued message", `document.querySelector('.session-queue')?.textContent.includes('update the screenshots')`)
	waitFor(t, ctx, "the plan's steps", `document.querySelectorAll('.plan-step').length === 3 &&
		document.querySelector('.plan-step[data-step-id="docs"]')?.dataset.state === 'held' &&
		document.querySelector('.plan-step[data-step-id="build"] .plan-attempts')?.textContent.includes('repair') &&
		document.querySelector('.plan-step[data-step-id="check"]')?.textContent.includes('@tester')`)
	waitFor(t, ctx, "the hand-over and delete controls", `[...document.querySelectorAll('.session-hand-to option')].map((o) => o.textContent).join('|').includes('Tester (@tester)') &&
		!!document.querySelector('.session-card .session-delete')`)
	screenshot(t, ctx, "node-work-1280.png", 1280)
	screenshot(t, ctx, "node-work-390.png", 390)

	if err := chromedp.Do(ctx, chromedp.SendKeys(`.session-steer input`, "use the system setting by default")); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `.session-steer-send`)
	waitFor(t, ctx, "why the steer could not go", `(document.querySelector('.session-card .node-card-note')?.textContent ?? '').length > 0 &&
		!document.querySelector('.session-card .node-card-note').textContent.startsWith('Sent')`)
}

// TestNodeUIHelperRoom lists a node's helper under Helpers; its task room reads, with no composer,
// and keeping the helper makes it one of the person's nodes.
func TestNodeUIHelperRoom(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	var n struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Scout", "templateId": "researcher"}, &n); err != nil {
		t.Fatal(err)
	}
	// As runtime/node's bringHelper leaves them: the helper, its task room and its thread.
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO node_agents (id, name, slug, role, template_id, charter, charter_edited, avatar, provider, model, effort, status, autonomy, parent_node_id, created_at, updated_at)
			VALUES ('nod_helper', 'Risk', 'risk', 'reviewer', '', 'Review the plan for risks', 1, '{"shape":"circle","color":"#7c5cff","eyes":"dots"}', '', '', '', 'active', '{"can":"read"}', ?, ?, ?)`, []any{n.ID, now, now}},
		{`INSERT INTO node_rooms (id, kind, title, lead_node_id, created_at, updated_at) VALUES ('room_task', 'task', 'Review the plan for risks', ?, ?, ?)`, []any{n.ID, now, now}},
		{`INSERT INTO node_room_members (room_id, node_id, seen_seq, private_seen_seq, joined_at) VALUES ('room_task', ?, 0, 0, ?), ('room_task', 'nod_helper', 0, 0, ?)`, []any{n.ID, now, now}},
		{`INSERT INTO node_messages (id, room_id, seq, author, author_node_id, kind, body, created_at, updated_at)
			VALUES ('msg_brief', 'room_task', 1, 'node', ?, 'text', 'Review the plan for risks.', ?, ?),
			       ('msg_result', 'room_task', 2, 'node', 'nod_helper', 'text', 'No risks found: the rollout is behind a flag.', ?, ?)`, []any{n.ID, now, now, now, now}},
		{`UPDATE node_rooms SET next_seq = 3 WHERE id = 'room_task'`, nil},
	} {
		if _, err := rt.store.Writer().Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/nodes")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the helper listed", `document.querySelector('#helper-list')?.textContent.includes('for @scout')`)
	press(t, ctx, `#helper-list a`)
	waitFor(t, ctx, "the helper's thread, read only", `document.querySelector('#node-thread')?.textContent.includes('No risks found') &&
		!!document.querySelector('#node-readonly') && !document.querySelector('#node-input')`)
	screenshot(t, ctx, "node-helper-1280.png", 1280)
	screenshot(t, ctx, "node-helper-390.png", 390)
	press(t, ctx, `#helper-keep`)
	waitFor(t, ctx, "the kept helper among the nodes", `document.querySelector('#node-list')?.textContent.includes('@risk')`)
}
