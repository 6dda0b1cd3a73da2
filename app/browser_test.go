package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/frontend"
)

// needBrowser returns Chromium's path, or skips the test where there is none: except in CI, where a
// test that cannot run fails.
func needBrowser(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium on PATH; .ci/run installs Debian's chromium")
	}
	t.Skip("no Chromium on PATH (apt-get install chromium)")
	return ""
}

func needUI(t testing.TB) {
	t.Helper()
	if frontend.Built() {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("the web UI is not built; make test builds it first")
	}
	t.Skip("the web UI is not built (make ui)")
}

// newBrowser starts headless Chromium with the flags this offline machine needs. A start that
// fails is tried once more: under a loaded CI machine Debian's launcher now and then exits before
// Chromium prints its DevTools address (its /dev/shm check reads two mounts from a test's
// namespace), which says nothing about the page under test.
func newBrowser(t testing.TB) context.Context {
	t.Helper()
	ctx, err := startBrowser(t)
	if err != nil {
		t.Logf("start Chromium: %v; trying once more", err)
		if ctx, err = startBrowser(t); err != nil {
			t.Fatalf("start Chromium: %v", err)
		}
	}
	return ctx
}

func startBrowser(t testing.TB) (context.Context, error) {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(needBrowser(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// Start Chromium on this context, which lives as long as the test: the first action on a
	// chromedp context starts the browser under the context it is given, and a test's own context
	// with a deadline would take the browser down with it when it ends, before a failing test
	// could show its page.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		return nil, err
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx, nil
}

func startTestRuntime(t testing.TB) *Runtime {
	t.Helper()
	rt, err := startRuntime(context.Background(), runtimeConfig{
		DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// screenshotDir is where browser tests leave their pictures to be looked at.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("SCREENSHOT_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ensemble-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshot(t *testing.T, ctx context.Context, name string, width int64) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
		t.Fatal(err)
	}
	// The picture waits for the page to be laid out at the new width: two frames painted at it.
	settled := fmt.Sprintf(`(() => {
		if (window.__shotWidth !== %[1]d) {
			window.__shotWidth = %[1]d;
			window.__shotReady = false;
			requestAnimationFrame(() => requestAnimationFrame(() => (window.__shotReady = true)));
		}
		return window.__shotReady && innerWidth === %[1]d;
	})()`, width)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](settled, pollFor(ctx)...)); err != nil {
		t.Fatalf("the page at %d px: %v", width, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(screenshotDir(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// TestUIBoardLiveAcrossPages opens the board in two tabs; a task added in one shows in the other
// without a reload, as do tasks made through the API, an edit, a delete and its Undo.
func TestUIBoardLiveAcrossPages(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	first := newBrowser(t)
	ctx, cancel := context.WithTimeout(first, browserTestTime)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("first page: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	second := newTab(t, first) // a second tab of the same browser, signed in by the cookie
	ctx2, cancel3 := context.WithTimeout(second, browserTestTime)
	defer cancel3()
	if err := chromedp.Do(ctx2, chromedp.Navigate(rt.URL+"/")); err != nil {
		t.Fatalf("second page: %v", err)
	}
	waitFor(t, ctx2, "the second page, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	// A mark on the second page's window: a reload would wipe it, so its survival at the end shows
	// that every change arrived live.
	if _, err := chromedp.Run(ctx2, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}

	typeInto(t, ctx, "#quick-add", "Water the tomatoes\n")
	waitShown(t, ctx, `[data-status="todo"] [data-task-id]`)
	sel := chromedp.CSS(`[data-status="todo"] [data-task-id] .card-title`)
	if err := chromedp.Do(ctx2, chromedp.WaitVisible(sel)); err != nil {
		t.Fatalf("the task did not arrive in the second page: %v", err)
	}
	title, err := chromedp.Run(ctx2, chromedp.Text(sel))
	if err != nil || title != "Water the tomatoes" {
		t.Fatalf("second page shows %q, %v", title, err)
	}
	// A change made elsewhere (the API, as the command line would) arrives in both.
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	for _, title := range []string{"Prune the roses", "Order seeds", "Fix the gate"} {
		if err := c.do(ctx, "POST", "/api/tasks", map[string]any{"title": title, "status": "in_progress"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, cx := range []context.Context{ctx, ctx2} {
		if _, err := chromedp.Run(cx, chromedp.Poll[bool](`document.querySelectorAll('[data-status="in_progress"] [data-task-id]').length === 3`, pollFor(cx)...)); err != nil {
			t.Fatalf("API-made tasks did not arrive: %v", err)
		}
	}

	// Edit the first task's title in the first page: the second page's card follows.
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-status="todo"] [data-task-id]').dataset.taskId`))
	if err != nil || id == "" {
		t.Fatalf("the card's id: %q, %v", id, err)
	}
	card := `[data-task-id="` + id + `"]`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(location.hash = '#/task/`+id+`', true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the task's page", `!!document.querySelector('.task-actions')`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`([...document.querySelectorAll('.task-actions button')].find((b) => b.textContent.trim() === 'Edit').click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the editor", `!!document.querySelector('dialog.editor[open] .editor-title')`)
	if err := setInput(ctx, "dialog.editor .editor-title", "Water the tomatoes at dawn"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `dialog.editor .editor-foot .btn.primary`)
	waitFor(t, ctx2, "the edit in the second page", `document.querySelector('`+card+` .card-title')?.textContent.trim() === 'Water the tomatoes at dawn'`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(location.hash = '#/', true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board again", `!!document.querySelector('`+card+`')`)

	// Delete it from the second page: it leaves the first. Undo there brings it back to both.
	if _, err := chromedp.Run(ctx2, chromedp.Evaluate[bool](`(location.hash = '#/task/`+id+`', true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx2, "the task's page", `!!document.querySelector('.task-actions')`)
	if _, err := chromedp.Run(ctx2, chromedp.Evaluate[bool](`([...document.querySelectorAll('.task-actions button')].find((b) => b.textContent.trim() === 'Edit').click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx2, "the editor", `!!document.querySelector('dialog.editor[open] .btn.danger')`)
	press(t, ctx2, `dialog.editor .editor-foot .btn.danger`)
	waitFor(t, ctx, "the deleted card gone from the first page", `!document.querySelector('`+card+`')`)
	var trash struct {
		Items []struct{ ID string } `json:"items"`
	}
	if err := c.do(ctx, "GET", "/api/trash", nil, &trash); err != nil || len(trash.Items) != 1 || trash.Items[0].ID != id {
		t.Fatalf("Trash after the delete: %+v, %v", trash, err)
	}
	press(t, ctx, `button[aria-label="Undo"]`)
	if _, err := chromedp.Run(ctx2, chromedp.Evaluate[bool](`(location.hash = '#/', true)`)); err != nil {
		t.Fatal(err)
	}
	for _, cx := range []context.Context{ctx, ctx2} {
		waitFor(t, cx, "the card back after Undo", `document.querySelector('[data-status="todo"] `+card+` .card-title')?.textContent.trim() === 'Water the tomatoes at dawn'`)
	}
	if ok, err := chromedp.Run(ctx2, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !ok {
		t.Errorf("the second page was reloaded (%v); the changes must arrive live", err)
	}

	screenshot(t, ctx, "board-1280.png", 1280)
	screenshot(t, ctx2, "board-390.png", 390)
}

func readToken(t testing.TB, rt *Runtime) string {
	f, err := readAPIFile(rt.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	return f.Token
}
