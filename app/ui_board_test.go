package app

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestUIBoardCreateAndMove makes a task with the quick-add field, moves it with its card's "Move…"
// control and by dragging it to another column, and checks each move through the API; a move the
// state machine refuses (Proposed → Done) says why in one sentence and leaves the card where it
// was. With the assistant dock open on a wide screen the board makes room for it.
func TestUIBoardCreateAndMove(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	status := func(id string) string {
		t.Helper()
		var task struct {
			Status string `json:"status"`
		}
		if err := c.do(ctx, "GET", "/api/tasks/"+id, nil, &task); err != nil {
			t.Fatalf("GET the task: %v", err)
		}
		return task.Status
	}
	inColumn := func(id, col string) string {
		return `!!document.querySelector('[data-status="` + col + `"] [data-task-id="` + id + `"]')`
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)

	// Create through the quick-add field: the task lands in To do.
	typeInto(t, ctx, "#quick-add", "Water the tomatoes\n")
	waitFor(t, ctx, "the new card in To do", `[...document.querySelectorAll('[data-status="todo"] [data-task-id] .card-title')].some((c) => c.textContent.trim() === 'Water the tomatoes')`)
	waitFor(t, ctx, "the field cleared", `document.querySelector('#quick-add').value === ''`)
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-status="todo"] [data-task-id]').dataset.taskId`))
	if err != nil || id == "" {
		t.Fatalf("the new card's id: %q, %v", id, err)
	}
	if s := status(id); s != "todo" {
		t.Fatalf("the new task is %q, want todo", s)
	}

	// Move it with the card's "Move…" control, which offers only the moves the state machine allows.
	opts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-task-id="`+id+`"] select.move option')].map((o) => o.value)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(opts, ",") != ",in_progress,blocked,done,dropped" {
		t.Errorf("Move… offers %q for a task in To do", opts)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const s = document.querySelector('[data-task-id="`+id+`"] select.move');
		s.focus();
		s.value = 'in_progress';
		s.dispatchEvent(new Event('change', { bubbles: true }));
		return true;
	})()`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the card in In progress", inColumn(id, "in_progress"))
	if s := status(id); s != "in_progress" {
		t.Fatalf("after Move… the task is %q, want in_progress", s)
	}

	// Drag it to Done. The board uses HTML5 drag and drop: real mouse events start the drag, and
	// the browser's drag (intercepted, as headless Chromium does not finish it alone) drops it.
	// Wide enough that every column is in view at once.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1920, 900)); err != nil {
		t.Fatal(err)
	}
	drag := func(id, to string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.DragAndDrop(chromedp.CSS(`[data-task-id="`+id+`"] .card-title`), chromedp.CSS(`[data-status="`+to+`"] .cards`))); err != nil {
			t.Fatalf("drag to %s: %v", to, err)
		}
	}
	drag(id, "done")
	waitFor(t, ctx, "the card in Done", inColumn(id, "done"))
	if s := status(id); s != "done" {
		t.Fatalf("after the drag the task is %q, want done", s)
	}
	waitFor(t, ctx, "no column left marked as a drop target", `!document.querySelector('.column.over, .board.dragging')`)

	// A proposed task dragged to Done is refused: the sentence shows, the card stays.
	var proposed struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, "POST", "/api/tasks", map[string]any{"title": "Repaint the shed", "status": "proposed"}, &proposed); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the proposed task on the board", inColumn(proposed.ID, "proposed"))
	drag(proposed.ID, "done")
	waitFor(t, ctx, "the refusal, in one sentence", `[...document.querySelectorAll('#toast .toast')].some((e) =>
		e.textContent.includes('cannot move to Done') && e.textContent.includes('To do'))`)
	waitFor(t, ctx, "the card where it was", inColumn(proposed.ID, "proposed")+` && !document.querySelector('[data-status="done"] [data-task-id="`+proposed.ID+`"]')`)
	if s := status(proposed.ID); s != "proposed" {
		t.Fatalf("after a refused move the task is %q, want proposed", s)
	}

	screenshot(t, ctx, "board-moves-1280.png", 1280)
	screenshot(t, ctx, "board-moves-390.png", 390)

	// The assistant dock open at 1280: the filter row and the board end where the dock begins.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("open the dock: %v", err)
	}
	press(t, ctx, `#assistant-button`)
	waitShown(t, ctx, `#assistant-dock`)
	beside := `(() => {
		const dock = document.querySelector('#assistant-dock').getBoundingClientRect();
		const f = document.querySelector('.filters').getBoundingClientRect();
		const b = document.querySelector('.board').getBoundingClientRect();
		return dock.width > 0 && f.right <= dock.left + 0.5 && b.right <= dock.left + 0.5;
	})()`
	waitFor(t, ctx, "the page beside the open dock", beside)
	screenshot(t, ctx, "board-dock-1280.png", 1280)
	press(t, ctx, `#dock-close`)
	waitFor(t, ctx, "the page full width again", `document.querySelector('.filters').getBoundingClientRect().right === document.documentElement.clientWidth`)
}

// TestUIAssistantFoldsReadsAndDiscards: a reply of five calls folds its run of three reads into one
// "3 steps" row that opens in place; under "Preview first" a held write offers Discard beside Apply,
// and a discarded one is kept as discarded.
func TestUIAssistantFoldsReadsAndDiscards(t *testing.T) {
	needUI(t)
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	t.Setenv("OPENAI_API_KEY", "")
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	policy := func(wp string) {
		t.Helper()
		if err := c.do(ctx, "PUT", "/api/assistant/settings", map[string]any{"provider": "anthropic", "model": "claude-test", "writePolicy": wp}, nil); err != nil {
			t.Fatalf("set the model: %v", err)
		}
	}
	policy("immediate")
	model.Script(
		enginetest.Step{}.Call("hub_list_tasks", map[string]any{}).Call("hub_list_projects", map[string]any{}).Call("hub_list_people", map[string]any{}).
			Call("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Sort the seeds"}}}).Call("hub_list_tasks", map[string]any{}),
		enginetest.Say("Looked around and added one task."),
	)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("open the dock: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	press(t, ctx, `#assistant-button`)
	waitShown(t, ctx, `#dock-input`)
	typeInto(t, ctx, `#dock-input`, "Look around, then add Sort the seeds\n")
	waitFor(t, ctx, "the turn ends", `document.querySelector('#dock-thread').textContent.includes('added one task') && !!document.querySelector('#dock-send')`)
	waitFor(t, ctx, "the reply's work behind one line", `document.querySelector('#dock-thread details.work > summary')?.textContent.trim() === '5 steps · 1 change'`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('#dock-thread details.work > summary').click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "three reads as one row, then the write, then the last read", `(() => {
		const items = [...document.querySelector('#dock-thread details.work > ul.tools').children];
		return items.length === 3 && items[0].matches('.reads[data-reads="3"]') && items[0].textContent.includes('3 steps') &&
			items[1].matches('.tool[data-status="done"]') && !!items[1].querySelector('.tool-undo') && items[2].matches('.tool');
	})()`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('#dock-thread .reads > details > summary').click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the three reads, opened in place", `document.querySelectorAll('#dock-thread .reads > details[open] .tool').length === 3`)
	screenshot(t, ctx, "assistant-folded-1280.png", 1280)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// Preview first: Discard beside Apply; the discarded write is kept so and changes nothing.
	policy("preview")
	model.Script(
		enginetest.Step{}.Call("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Paint the fence"}}}),
		enginetest.Say("Ready for you to apply."),
	)
	typeInto(t, ctx, `#dock-input`, "Paint the fence\n")
	waitFor(t, ctx, "a proposal with Discard and Apply", `!!document.querySelector('#dock-thread .proposals .prop-discard') && !!document.querySelector('#dock-thread .proposals .prop-apply') && !!document.querySelector('#dock-send')`)
	screenshot(t, ctx, "assistant-discard-1280.png", 1280)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#dock-thread .proposals .prop-discard`)
	waitFor(t, ctx, "discarded, or a sentence why not", `!!document.querySelector('#dock-thread .tool[data-status="discarded"]') || !!document.querySelector('#dock-thread .tool-err')`)
	if msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#dock-thread .tool-err')?.textContent ?? ''`)); msg != "" {
		t.Fatalf("Discard: %s", msg)
	}
	waitFor(t, ctx, "no proposal left", `!document.querySelector('#dock-thread .proposals')`)
	var convs struct {
		Conversations []struct {
			ID string `json:"id"`
		} `json:"conversations"`
	}
	if err := c.do(ctx, "GET", "/api/assistant/conversations", nil, &convs); err != nil || len(convs.Conversations) == 0 {
		t.Fatalf("conversations: %v %+v", err, convs)
	}
	var conv struct {
		Messages []struct {
			Tools []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"tools"`
		} `json:"messages"`
	}
	if err := c.do(ctx, "GET", "/api/assistant/conversations/"+convs.Conversations[0].ID, nil, &conv); err != nil {
		t.Fatal(err)
	}
	last := conv.Messages[len(conv.Messages)-1].Tools
	if len(last) != 1 || last[0].Status != "discarded" {
		t.Fatalf("the held write after Discard: %+v", last)
	}
	var list struct {
		Tasks []struct {
			Title string `json:"title"`
		} `json:"tasks"`
	}
	if err := c.do(ctx, "GET", "/api/tasks", nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, x := range list.Tasks {
		if x.Title == "Paint the fence" {
			t.Fatal("a discarded write made its task")
		}
	}
}

// TestUIBoardNodeOwner: a task given to a node shows the node's name and face on its card, one
// given to a crew "Crew <title>"; the task's Owner field offers the nodes and crews, and choosing
// a crew there gives the task to it.
func TestUIBoardNodeOwner(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	var ada, bo struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Ada", "slug": "ada", "role": "researcher",
		"avatar": map[string]any{"shape": "hex", "color": "#d5604f", "eyes": "dots"}}, &ada); err != nil {
		t.Fatal(err)
	}
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Bo", "slug": "bo", "role": "tester"}, &bo); err != nil {
		t.Fatal(err)
	}
	var crew struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, "POST", "/api/node/crews", map[string]any{"title": "Launch", "nodeIds": []string{ada.ID, bo.ID}}, &crew); err != nil {
		t.Fatal(err)
	}
	var withNode, withCrew struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, "POST", "/api/tasks", map[string]any{"title": "Read the sync paper", "owner": "node", "assigneeNodeId": ada.ID, "priority": "high"}, &withNode); err != nil {
		t.Fatal(err)
	}
	if err := c.do(ctx, "POST", "/api/tasks", map[string]any{"title": "Test the release", "assigneeRoomId": crew.ID}, &withCrew); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	badge := func(id string) string {
		return `document.querySelector('[data-task-id="` + id + `"] .badge.node-owner')`
	}
	waitFor(t, ctx, "the node on its card, with its face", badge(withNode.ID)+`?.textContent.trim() === 'Ada' && !!`+badge(withNode.ID)+`.querySelector('.node-avatar[data-shape="hex"]')`)
	waitFor(t, ctx, "the crew on its card", badge(withCrew.ID)+`?.textContent.trim() === 'Crew Launch'`)
	screenshot(t, ctx, "board-node-owner-1280.png", 1280)
	// At 390 the board shows one column at a time: jump to To do, where both cards are.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 900)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `[data-jump="todo"]`)
	waitFor(t, ctx, "To do in view", `(() => { const r = document.querySelector('[data-task-id="`+withCrew.ID+`"]').getBoundingClientRect(); return r.left >= 0 && r.right <= 390; })() && !!document.querySelector('[data-jump="todo"].on')`)
	screenshot(t, ctx, "board-node-owner-390.png", 390)

	// The Owner field offers both nodes and the crew; choosing the crew gives the task to it.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `[data-task-id="`+withNode.ID+`"] .card-title`)
	press(t, ctx, `.task-actions button.btn.small`)
	waitFor(t, ctx, "the Owner field's nodes and crews", `(() => {
		const s = [...document.querySelectorAll('dialog[open] select')].find((s) => [...s.options].some((o) => o.value.startsWith('node:')));
		if (!s) return false;
		const v = [...s.options].map((o) => o.value);
		return s.value === 'node:`+ada.ID+`' && v.includes('node:`+bo.ID+`') && v.includes('crew:`+crew.ID+`');
	})()`)
	screenshot(t, ctx, "board-node-owner-field-1280.png", 1280)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const s = [...document.querySelectorAll('dialog[open] select')].find((s) => [...s.options].some((o) => o.value.startsWith('node:')));
		s.value = 'crew:`+crew.ID+`';
		return s.dispatchEvent(new Event('change', { bubbles: true }));
	})()`)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `dialog[open] button[type="submit"]`)
	waitFor(t, ctx, "the editor closed", `!document.querySelector('dialog[open]')`)
	var got struct {
		AssigneeNodeID *string `json:"assigneeNodeId"`
		AssigneeRoomID *string `json:"assigneeRoomId"`
	}
	if err := c.do(ctx, "GET", "/api/tasks/"+withNode.ID, nil, &got); err != nil {
		t.Fatal(err)
	}
	if got.AssigneeNodeID != nil || got.AssigneeRoomID == nil || *got.AssigneeRoomID != crew.ID {
		t.Fatalf("after choosing the crew: node %v, crew %v", got.AssigneeNodeID, got.AssigneeRoomID)
	}
}
