package app

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/engines"
)

// recordScreen is one screen of the left navigation for a kind of record, and what its test fills in.
type recordScreen struct {
	screen string // the route and the screen's ids: #/projects, #projects-new
	path   string // the API's collection
	title  string // the field that names a record
	// first fills the new record's fields; second is the edit: a field and its new value.
	first  map[string]string
	second [2]string
	empty  string // words the empty screen says
}

var recordScreens = []recordScreen{
	{"projects", "projects", "name", map[string]string{"name": "Greenhouse automation", "summary": "Vents open by themselves"},
		[2]string{"summary", "Vents and misting open by themselves"}, "groups tasks toward one outcome"},
	{"pages", "pages", "title", map[string]string{"title": "How we release", "body": "# Steps\n\n- tag\n- build"},
		[2]string{"title", "How we release, step by step"}, "Markdown"},
	{"people", "people", "name", map[string]string{"name": "Mira Okafor", "email": "mira@example.com", "role": "Designer"},
		[2]string{"role", "Lead designer"}, "who you work with"},
	{"repos", "repos", "name", map[string]string{"name": "greenhouse-firmware", "url": "https://example.com/you/greenhouse-firmware.git"},
		[2]string{"defaultBranch", "trunk"}, "the code your agents work in"},
}

// TestUIRecordScreens walks every record screen of the left navigation (projects, pages, people,
// repositories) at 1280 and at 390 px, where the navigation is a bar at the bottom and the rarer
// screens are under More: the empty screen says what to do; a record is made, changed, moved to
// Trash and brought back with Undo, each checked through the API.
func TestUIRecordScreens(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	list := func(path string) map[string]map[string]any {
		t.Helper()
		var body map[string]any
		if err := c.do(ctx, "GET", "/api/"+path, nil, &body); err != nil {
			t.Fatalf("GET /api/%s: %v", path, err)
		}
		out := map[string]map[string]any{}
		items, _ := body[path].([]any)
		for _, it := range items {
			m := it.(map[string]any)
			out[m["id"].(string)] = m
		}
		return out
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)

	for _, width := range []int64{1280, 390} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		for _, rs := range recordScreens {
			w := strconv.FormatInt(width, 10)
			open := func() {
				t.Helper()
				if width < 720 && rs.screen != "projects" && rs.screen != "pages" {
					press(t, ctx, `#nav-more`)
					waitFor(t, ctx, "the More sheet", `!!document.querySelector('#nav-more-sheet')`)
				}
				press(t, ctx, `[data-nav="`+rs.screen+`"]`)
				waitFor(t, ctx, "the "+rs.screen+" screen", `location.hash === '#/`+rs.screen+`' && !!document.querySelector('#`+rs.screen+`-screen')`)
			}
			open()
			waitFor(t, ctx, "the nav marks the screen", `[...document.querySelectorAll('[data-nav="`+rs.screen+`"]')].some((a) => a.getAttribute('aria-current') === 'page')`)
			if width == 1280 {
				waitFor(t, ctx, "the empty "+rs.screen+" screen says what to do", `document.querySelector('#`+rs.screen+`-empty')?.textContent.includes(`+strconv.Quote(rs.empty)+`)`)
				screenshot(t, ctx, rs.screen+"-empty-"+w+".png", width)
			}

			// Make one.
			name := rs.first[rs.title]
			if width != 1280 {
				name += " (phone)"
			}
			press(t, ctx, `#`+rs.screen+`-new`)
			waitFor(t, ctx, "the new "+rs.screen+" form", `document.querySelector('#record-form')?.dataset.recordId === 'new'`)
			for field, v := range rs.first {
				if field == rs.title {
					v = name
				}
				if err := setInput(ctx, `#`+rs.screen+`-f-`+field, v); err != nil {
					t.Fatal(err)
				}
			}
			press(t, ctx, `#record-save`)
			waitFor(t, ctx, "the new "+rs.screen+" listed and open", `[...document.querySelectorAll('#`+rs.screen+`-list .record-title')].some((e) => e.textContent.trim() === `+strconv.Quote(name)+`) &&
				document.querySelector('#record-form')?.dataset.recordId?.length > 3`)
			id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#record-form').dataset.recordId`))
			if err != nil {
				t.Fatal(err)
			}
			got := list(rs.path)[id]
			if got == nil || got[rs.title] != name {
				t.Fatalf("%s after Make: %v", rs.path, got)
			}
			for field, v := range rs.first {
				if field != rs.title && got[field] != v {
					t.Errorf("%s %s = %q, want %q", rs.path, field, got[field], v)
				}
			}

			// Change it.
			if err := setInput(ctx, `#`+rs.screen+`-f-`+rs.second[0], rs.second[1]); err != nil {
				t.Fatal(err)
			}
			press(t, ctx, `#record-save`)
			waitFor(t, ctx, "saved", `!!document.querySelector('.record-saved') && document.querySelector('#record-save').disabled`)
			if got := list(rs.path)[id]; got == nil || got[rs.second[0]] != rs.second[1] {
				t.Fatalf("%s after Save: %v, want %s %q", rs.path, got, rs.second[0], rs.second[1])
			}
			if rs.screen == "pages" {
				press(t, ctx, `[data-field="body"] .seg button:last-child`)
				waitFor(t, ctx, "the page's preview", `document.querySelector('#pages-f-body-preview h1')?.textContent === 'Steps'`)
			}
			screenshot(t, ctx, rs.screen+"-"+w+".png", width)

			// Move it to Trash, then Undo from the toast.
			press(t, ctx, `#record-delete`)
			waitFor(t, ctx, "gone from the list", `![...document.querySelectorAll('#`+rs.screen+`-list [data-record-id]')].some((e) => e.dataset.recordId === `+strconv.Quote(id)+`)`)
			waitFor(t, ctx, "the Trash toast", `[...document.querySelectorAll('#toast .toast')].some((e) => e.textContent.includes('to Trash'))`)
			if _, ok := list(rs.path)[id]; ok {
				t.Fatalf("%s %s still listed after Move to Trash", rs.path, id)
			}
			pressToast(t, ctx, "Moved")
			waitFor(t, ctx, "back after Undo", `[...document.querySelectorAll('#`+rs.screen+`-list [data-record-id]')].some((e) => e.dataset.recordId === `+strconv.Quote(id)+`)`)
			if got := list(rs.path)[id]; got == nil || got[rs.second[0]] != rs.second[1] {
				t.Fatalf("%s after Undo: %v", rs.path, got)
			}
			if width < 720 {
				// On a phone the list and the form take turns: the form's back button shows the list.
				press(t, ctx, `#`+rs.screen+`-list [data-record-id="`+id+`"]`)
				waitFor(t, ctx, "the form instead of the list", `!!document.querySelector('#record-form') && !document.querySelector('#`+rs.screen+`-list')?.getClientRects().length`)
				press(t, ctx, `#record-back`)
				waitFor(t, ctx, "the list again", `document.querySelector('#`+rs.screen+`-list')?.getClientRects().length > 0`)
				screenshot(t, ctx, rs.screen+"-list-"+w+".png", width)
			}
		}
	}
	if n := len(list("projects")); n != 2 {
		t.Errorf("%d projects at the end, want 2", n)
	}
}

// TestUIBoardCardsNeedsAndSessions: a task given to an agent shows on its card what a person
// scans for (the agent, its run's state, Needs me waiting, the project, the due date); Needs me
// recommends Allow once for a change inside the run's own folder and says why; the session it made
// is listed under Sessions with its runs, continued with a next task, and deleted. At 390 px the
// board opens on the first column that has tasks, and a task added from the header is shown.
func TestUIBoardCardsNeedsAndSessions(t *testing.T) {
	needUI(t)
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"stand-in": scriptedAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	folder := t.TempDir()
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	post := func(path string, body map[string]any) map[string]any {
		t.Helper()
		var out map[string]any
		if err := c.do(ctx, "POST", path, body, &out); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		return out
	}
	openNeeds := func() []map[string]any {
		var body struct {
			Needs []map[string]any `json:"needs"`
		}
		if err := c.do(ctx, "GET", "/api/needs", nil, &body); err != nil {
			t.Fatal(err)
		}
		return body.Needs
	}
	jobStatus := func(id string) string {
		var j struct {
			Status string `json:"status"`
		}
		if err := c.do(ctx, "GET", "/api/agent/jobs/"+id, nil, &j); err != nil {
			t.Fatal(err)
		}
		return j.Status
	}

	today := time.Now().Format("2006-01-02")
	prj := post("/api/projects", map[string]any{"name": "Greenhouse"})
	task := post("/api/tasks", map[string]any{"title": "Vent the greenhouse", "status": "in_progress", "projectId": prj["id"], "due": today})
	post("/api/tasks", map[string]any{"title": "Fix the gate", "status": "blocked"})
	taskID := task["id"].(string)
	job := post("/api/agent/assign", map[string]any{"taskId": taskID, "agent": "stand-in", "folder": folder})
	jobID := job["id"].(string)
	eventually(t, ctx, "the run's question on Needs me", func() bool { return len(openNeeds()) == 1 })

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	card := `document.querySelector('[data-task-id="` + taskID + `"]')`
	waitFor(t, ctx, "the card shows the agent, its run, Needs me, the project and the due date", card+` &&
		`+card+`.querySelector('.card-agent')?.textContent === 'stand-in' &&
		`+card+`.querySelector('.card-run')?.dataset.runStatus === 'running' &&
		`+card+`.querySelector('.badge.needs')?.textContent.trim() === 'Needs you' &&
		`+card+`.querySelector('.badge.project')?.textContent === 'Greenhouse' &&
		`+card+`.querySelector('.badge.due')?.dataset.due === 'today'`)
	waitFor(t, ctx, "the nav's Needs me count", `document.getElementById('needs-count')?.textContent === '1'`)
	screenshot(t, ctx, "board-cards-1280.png", 1280)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// Needs me: Allow once, recommended because the change stays in the run's own folder.
	press(t, ctx, `#needs-button`)
	waitFor(t, ctx, "the Needs me screen", `location.hash === '#/needs' && !!document.querySelector('#needs-screen [data-need-id]')`)
	waitFor(t, ctx, "Allow once recommended, and why", `document.querySelector('[data-need-id] [data-option="0"]').classList.contains('primary') &&
		document.querySelector('[data-need-id] .need-rec')?.textContent.trim() === "Recommended: Allow once. It changes only files in the run's own folder, in the sandbox."`)
	screenshot(t, ctx, "needs-recommended-1280.png", 1280)
	screenshot(t, ctx, "needs-recommended-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `[data-need-id] [data-option="0"]`)
	waitFor(t, ctx, "nothing needs you", `!!document.querySelector('#needs-empty') && document.getElementById('needs-count')?.textContent === '0'`)
	eventually(t, ctx, "the run done", func() bool { return jobStatus(jobID) == "done" })

	// The run card reads as sentences.
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/task/"+taskID)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the run's rules in words", `document.querySelector('#run-rules')?.textContent === 'Ask mode; internet on, sandboxed; may read outside its folder; no commits'`)
	waitFor(t, ctx, "the first event in words", `[...document.querySelectorAll('.trace-row')].some((r) => r.textContent.includes('(Ask mode; internet on, sandboxed;'))`)

	// Sessions: the run's session, its run, Continue, Delete.
	press(t, ctx, `#nav-sessions`)
	waitFor(t, ctx, "the session listed", `document.querySelectorAll('#sessions-list [data-session-id]').length === 1`)
	press(t, ctx, `#sessions-list [data-session-id]`)
	waitFor(t, ctx, "the session with its run", `document.querySelectorAll('#session-runs [data-run-id]').length === 1 &&
		document.querySelector('#session-detail .session-state')?.textContent === 'Idle'`)
	if err := setInput(ctx, "#session-next", "Write the vent schedule down"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#session-continue-submit`)
	eventually(t, ctx, "the continued run's question", func() bool { return len(openNeeds()) == 1 })
	waitFor(t, ctx, "the second run in the session, waiting", `document.querySelectorAll('#session-runs [data-run-id]').length === 2 &&
		document.querySelector('#session-detail .session-state')?.dataset.status === 'waiting' && !document.querySelector('#session-delete')`)
	screenshot(t, ctx, "sessions-1280.png", 1280)
	screenshot(t, ctx, "sessions-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	var second struct {
		Runs []struct {
			ID        string `json:"id"`
			Continues string `json:"continues"`
		} `json:"runs"`
	}
	sid, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#session-detail').dataset.sessionId`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.do(ctx, "GET", "/api/agent/sessions/"+sid, nil, &second); err != nil || len(second.Runs) != 2 || second.Runs[1].Continues != jobID {
		t.Fatalf("the session after Continue: %+v, %v", second, err)
	}
	post("/api/needs/"+openNeeds()[0]["id"].(string)+"/answer", map[string]any{"option": 0})
	eventually(t, ctx, "the continued run done", func() bool { return jobStatus(second.Runs[1].ID) == "done" })
	press(t, ctx, `#session-delete`)
	waitFor(t, ctx, "asked to be sure", `document.querySelector('#session-delete')?.textContent.includes('cannot be reopened')`)
	press(t, ctx, `#session-delete`)
	waitFor(t, ctx, "the session deleted", `document.querySelector('#session-detail .session-state')?.dataset.status === 'deleted' &&
		!document.querySelector('#session-continue') && !!document.querySelector('#session-no-continue')`)

	// A phone: the board opens on the first column that has tasks (Proposed is empty), and a task
	// added from the header is shown in To do.
	var all struct {
		Tasks []struct {
			Status string `json:"status"`
		} `json:"tasks"`
	}
	if err := c.do(ctx, "GET", "/api/tasks", nil, &all); err != nil {
		t.Fatal(err)
	}
	first := ""
	for _, st := range []string{"proposed", "todo", "in_progress", "waiting_approval", "blocked", "done"} {
		for _, x := range all.Tasks {
			if x.Status == st && first == "" {
				first = st
			}
		}
	}
	if first == "" || first == "proposed" {
		t.Fatalf("the tasks' columns: %+v; the test needs Proposed empty", all.Tasks)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 900), chromedp.Navigate(rt.URL+"/#/")); err != nil {
		t.Fatal(err)
	}
	inView := func(sel string) string {
		return `(() => {
			const b = document.querySelector('.board')?.getBoundingClientRect();
			const e = document.querySelector('` + sel + `')?.getBoundingClientRect();
			return !!b && !!e && e.width > 0 && e.left >= b.left - 1 && e.right <= b.right + 1;
		})()`
	}
	waitFor(t, ctx, "the board open on "+first, inView(`.column[data-status="`+first+`"]`)+` &&
		document.querySelector('.jump button.on')?.dataset.jump === '`+first+`'`)
	screenshot(t, ctx, "board-first-column-390.png", 390)
	typeInto(t, ctx, "#quick-add", "Water the seedlings\n")
	waitFor(t, ctx, "the new task shown in To do", `(() => {
		const card = [...document.querySelectorAll('[data-status="todo"] [data-task-id]')].find((c) => c.textContent.includes('Water the seedlings'));
		if (!card) return false;
		const b = document.querySelector('.board').getBoundingClientRect(), e = card.getBoundingClientRect();
		return e.left >= b.left - 1 && e.right <= b.right + 1;
	})()`)
	screenshot(t, ctx, "board-added-390.png", 390)
}

// TestUIBoardLongColumn: a column of 400 tasks puts only the cards in and near its view in the
// page, keeps its count, shows the last task when scrolled to the end, and shows a task just
// added to it, wherever the column was scrolled.
func TestUIBoardLongColumn(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	const n = 400
	for i := range n {
		if err := c.do(ctx, "POST", "/api/tasks", map[string]any{"title": "Pot seedling " + strconv.Itoa(i+1), "status": "todo"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	col := `document.querySelector('[data-status="todo"]')`
	list := col + `.querySelector('.cards')`
	waitFor(t, ctx, "the column's count and its first cards", col+`?.querySelector('.count')?.textContent === '`+strconv.Itoa(n)+`' &&
		`+list+`.querySelector('[data-task-id] .card-title')?.textContent === 'Pot seedling 1'`)
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[int](list+`.querySelectorAll('[data-task-id]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if shown < 5 || shown > 60 {
		t.Errorf("%d of %d cards in the page; want only those in and near the view", shown, n)
	}
	// Scrolled to the end (as far as the list reaches each time: heights are learnt as cards show).
	waitFor(t, ctx, "the last task at the end of the column", `(() => {
		const l = `+list+`;
		l.scrollTop = l.scrollHeight;
		l.dispatchEvent(new Event('scroll'));
		const last = [...l.querySelectorAll('[data-task-id] .card-title')].at(-1);
		return last?.textContent === 'Pot seedling `+strconv.Itoa(n)+`' && l.scrollTop + l.clientHeight >= l.scrollHeight - 2;
	})()`)
	// Back at the top, a task added to the column (from its own + button) is shown at its end.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const l = `+list+`; l.scrollTop = 0; l.dispatchEvent(new Event('scroll')); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the top again", list+`.querySelector('[data-task-id] .card-title')?.textContent === 'Pot seedling 1'`)
	press(t, ctx, `[data-status="todo"] .column-head .add`)
	typeInto(t, ctx, `[data-status="todo"] .column-add input`, "Label the trays\n")
	waitFor(t, ctx, "the added task in view", `(() => {
		const l = `+list+`, r = l.getBoundingClientRect();
		const card = [...l.querySelectorAll('[data-task-id]')].find((c) => c.textContent.includes('Label the trays'));
		const e = card?.getBoundingClientRect();
		return !!e && e.top >= r.top - 1 && e.bottom <= r.bottom + 1;
	})()`)
	screenshot(t, ctx, "board-long-column-1280.png", 1280)
}
