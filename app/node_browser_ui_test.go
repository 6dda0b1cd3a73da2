package app

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestNodeUIBrowserCards: a login card shows the site, what it asks and its answers (Open the
// browser for a computer without a screen, I'm done, Not now); Not now settles it. A
// media_preview card shows its held screenshot as a thumbnail only its owner opens, with
// Release and Discard; Release shows the picture in the chat.
func TestNodeUIBrowserCards(t *testing.T) {
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
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Ada"}, &n); err != nil {
		t.Fatal(err)
	}
	card := func(id, body, data string) {
		t.Helper()
		now := time.Now().UTC().Format(time.RFC3339Nano)
		_, err := rt.store.Writer().Exec(`INSERT INTO node_messages (id, room_id, seq, author, author_node_id, kind, body, data, visible_to, created_at, updated_at)
			SELECT ?, id, next_seq, 'node', ?, 'approval', ?, ?, '["owner"]', ?, ? FROM node_rooms WHERE id = ?`,
			id, n.ID, body, data, now, now, n.DMRoomID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.store.Writer().Exec(`UPDATE node_rooms SET next_seq = next_seq + 1 WHERE id = ?`, n.DMRoomID); err != nil {
			t.Fatal(err)
		}
	}
	lane := `"nodeId":"` + n.ID + `","lane":"conv:` + n.DMRoomID + `:p","private":true,"byOwner":true`
	expires := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	card("msg_login", "@ada needs you to sign in to portal.azure.com.",
		`{"type":"login","status":"pending",`+lane+`,"purpose":"sign_in","origin":"https://portal.azure.com","site":"portal.azure.com","tab":"t3","work":"node:`+n.ID+`:own","loginId":"lgn_1","display":false,"takeover":true,"expiresAt":"`+expires+`","reason":"To read this month's bill."}`)
	os.MkdirAll(filepath.Join(rt.cfg.DataDir, "node-files"), 0o700)
	for _, id := range []string{"nf_held1", "nf_held2", "nf_held3"} {
		if err := os.WriteFile(filepath.Join(rt.cfg.DataDir, "node-files", id), tinyPNG(t), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	card("msg_preview", "@ada held a screenshot for you to see first.",
		`{"type":"media_preview","status":"pending",`+lane+`,"evidence":[{"id":"nf_held1","name":"screenshot-1.png","size":2048,"sha256":"x","type":"image/png"}],"reasons":["it shows one of your owner's saved secrets"],"operation":"node:`+n.ID+`:own"}`)

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/nodes/"+n.DMRoomID)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the login card", `document.querySelector('[data-message-id="msg_login"] [data-testid="login-card"]')?.textContent.includes('portal.azure.com')`)
	waitFor(t, ctx, "Open the browser, without a screen", `!!document.querySelector('[data-message-id="msg_login"] .card-login-takeover') && !document.querySelector('[data-message-id="msg_login"] .card-login-local')`)
	waitFor(t, ctx, "the held screenshot's thumbnail", `document.querySelector('[data-message-id="msg_preview"] [data-file-id="nf_held1"] img')?.naturalWidth > 0`)
	screenshot(t, ctx, "node-browser-cards-1280.png", 1280)
	screenshot(t, ctx, "node-browser-cards-390.png", 390)

	press(t, ctx, `[data-message-id="msg_login"] .card-login-decline`)
	waitFor(t, ctx, "the login card, declined", `!!document.querySelector('[data-message-id="msg_login"] .node-card[data-status="declined"]') && !document.querySelector('[data-message-id="msg_login"] .card-login-done')`)
	press(t, ctx, `[data-message-id="msg_preview"] .card-release`)
	waitFor(t, ctx, "the preview card, released", `!!document.querySelector('[data-message-id="msg_preview"] .node-card[data-status="released"]')`)
	waitFor(t, ctx, "the released picture in the chat", `[...document.querySelectorAll('.node-file[data-file-id="nf_held1"] img')].some((i) => i.naturalWidth > 0)`)
	screenshot(t, ctx, "node-browser-cards-answered-390.png", 390)

	// Two held files on one card, answered one at a time: the first released shows at once and the
	// card waits; the last answer settles it.
	card("msg_preview2", "@ada held 2 screenshots for you to see first.",
		`{"type":"media_preview","status":"pending",`+lane+`,"evidence":[{"id":"nf_held2","name":"screenshot-2.png","size":2048,"sha256":"x","type":"image/png"},{"id":"nf_held3","name":"screenshot-3.png","size":2048,"sha256":"x","type":"image/png"}],"reasons":["it shows something shaped like a key or token"],"operation":"node:`+n.ID+`:own"}`)
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the page, live again", `document.querySelector('#live')?.dataset.state === 'live'`)
	waitFor(t, ctx, "each held file's own buttons", `document.querySelectorAll('[data-message-id="msg_preview2"] .file-release').length === 2 && document.querySelector('[data-message-id="msg_preview2"] .card-release')?.textContent === 'Release all'`)
	press(t, ctx, `[data-message-id="msg_preview2"] [data-file-id="nf_held2"] .file-release`)
	waitFor(t, ctx, "the first file released, the card still waiting", `!!document.querySelector('[data-message-id="msg_preview2"] [data-file-id="nf_held2"] .file-answer') && !!document.querySelector('[data-message-id="msg_preview2"] .node-card[data-status="pending"]')`)
	waitFor(t, ctx, "the first file in the chat", `[...document.querySelectorAll('.node-file[data-file-id="nf_held2"] img')].some((i) => i.naturalWidth > 0)`)
	screenshot(t, ctx, "node-held-one-at-a-time-1280.png", 1280)
	screenshot(t, ctx, "node-held-one-at-a-time-390.png", 390)
	press(t, ctx, `[data-message-id="msg_preview2"] [data-file-id="nf_held3"] .file-discard`)
	waitFor(t, ctx, "the card settled with its last file", `!!document.querySelector('[data-message-id="msg_preview2"] .node-card[data-status="released"]') && !document.querySelector('[data-message-id="msg_preview2"] [data-file-id="nf_held3"]')`)
	if _, err := os.Stat(filepath.Join(rt.cfg.DataDir, "node-files", "nf_held3")); !os.IsNotExist(err) {
		t.Fatalf("the discarded file is still kept: %v", err)
	}

	// The sites whose screenshots wait for the owner are in a node's settings.
	press(t, ctx, `.node-settings-open`)
	waitFor(t, ctx, "the preview sites", `!!document.querySelector('#node-preview-site-new')`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(`#node-preview-site-new`, "https://Bank.Example.com/login")); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `.node-preview-sites[data-rule="preview"] button[type="submit"]`)
	waitFor(t, ctx, "the site, kept as its host", `document.querySelector('#node-preview-sites')?.textContent.includes('bank.example.com')`)
	if sites, err := rt.nodes.PreviewSites(ctx); err != nil || len(sites) != 1 || sites[0] != "bank.example.com" {
		t.Fatalf("the preview sites: %v, %v", sites, err)
	}
	// A site never captured, beside them: marking it never takes it out of the preview list.
	for _, site := range []string{"health.example", "bank.example.com"} {
		if err := chromedp.Do(ctx, chromedp.SendKeys(`#node-never-site-new`, site)); err != nil {
			t.Fatal(err)
		}
		press(t, ctx, `.node-preview-sites[data-rule="never"] button[type="submit"]`)
		waitFor(t, ctx, "the site never captured", `document.querySelector('#node-never-sites')?.textContent.includes(`+strconv.Quote(site)+`)`)
	}
	waitFor(t, ctx, "the preview list without it", `!document.querySelector('#node-preview-sites')`)
	if rule := rt.nodes.SiteRule(ctx, "login.bank.example.com"); rule != "never" {
		t.Fatalf("the rule for a subdomain: %q", rule)
	}
	screenshot(t, ctx, "node-preview-sites-1280.png", 1280)
	screenshot(t, ctx, "node-preview-sites-390.png", 390)
}
