package app

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestNodeUIComputerCards: a computer card shows the command and the folder it asks for, with
// Once, This mission and Always; Always keeps the answer. A sudo card shows the exact command and
// a password box, and Decline settles it.
func TestNodeUIComputerCards(t *testing.T) {
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
	// The cards as a node's turn leaves them (no model here writes one).
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
	card("msg_computer", "Ada asks to run `npm test -- --watch=false` in /home/me/code/shop.",
		`{"type":"computer","status":"pending",`+lane+`,"computer":{"tool":"computer_run","folder":"/home/me/code/shop","command":"npm test -- --watch=false","ask":[{"kind":"folder","value":"/home/me/code/shop"}],"always":true,"mission":"lane:conv:x"}}`)
	card("msg_sudo", "Ada asks to run as the administrator: apt-get install -y htop",
		`{"type":"sudo","status":"pending",`+lane+`,"sudo":{"command":"apt-get install -y htop","reason":"You asked for htop to watch the build.","folder":"/home/me","computer":"studio","hash":"ab","tries":0}}`)

	card("msg_secret", "Ada asks for the secret STRIPE_API_KEY: To read your invoices.",
		`{"type":"secret","status":"pending",`+lane+`,"secret":{"name":"STRIPE_API_KEY","why":"To read your invoices.","allow":["https://api.stripe.com"]}}`)

	// A picture the node shared (node_share_file), kept as its evidence.
	os.MkdirAll(filepath.Join(rt.cfg.DataDir, "node-files"), 0o700)
	if err := os.WriteFile(filepath.Join(rt.cfg.DataDir, "node-files", "nf_shot1"), tinyPNG(t), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if _, err := rt.store.Writer().Exec(`INSERT INTO node_messages (id, room_id, seq, author, author_node_id, kind, body, data, visible_to, created_at, updated_at)
		SELECT 'msg_file', id, next_seq, 'node', ?, 'text', 'The build at 390 px', ?, '["owner"]', ?, ? FROM node_rooms WHERE id = ?`,
		n.ID, `{"type":"file","files":[{"id":"nf_shot1","name":"build-390.png","size":2048,"sha256":"x","type":"image/png"}]}`, now, now, n.DMRoomID); err != nil {
		t.Fatal(err)
	}
	rt.store.Writer().Exec(`UPDATE node_rooms SET next_seq = next_seq + 1 WHERE id = ?`, n.DMRoomID)

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/nodes/"+n.DMRoomID)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the computer card", `!!document.querySelector('[data-message-id="msg_computer"] .card-always')`)
	waitFor(t, ctx, "the sudo card", `!!document.querySelector('[data-message-id="msg_sudo"] input[type="password"]')`)
	waitFor(t, ctx, "the command on the sudo card", `document.querySelector('[data-message-id="msg_sudo"] [data-testid="sudo-command"]')?.textContent === 'apt-get install -y htop'`)
	waitFor(t, ctx, "the shared picture, shown", `document.querySelector('[data-file-id="nf_shot1"] img')?.naturalWidth > 0`)
	waitFor(t, ctx, "the secret card's suggested origin", `[...document.querySelectorAll('[data-message-id="msg_secret"] input')].some((i) => i.value === 'https://api.stripe.com')`)
	screenshot(t, ctx, "node-computer-cards-1280.png", 1280)
	screenshot(t, ctx, "node-computer-cards-390.png", 390)

	press(t, ctx, `[data-message-id="msg_computer"] .card-always`)
	waitFor(t, ctx, "the computer card, kept always", `document.querySelector('[data-message-id="msg_computer"] .node-card[data-status="approved"]')?.textContent.includes('Allowed always')`)
	press(t, ctx, `[data-message-id="msg_sudo"] .card-discard`)
	waitFor(t, ctx, "the sudo card, declined", `!!document.querySelector('[data-message-id="msg_sudo"] .node-card[data-status="discarded"]') && !document.querySelector('[data-message-id="msg_sudo"] input[type="password"]')`)
	// The secret, typed and sealed in the page, is saved on this computer.
	if err := chromedp.Do(ctx, chromedp.SendKeys(`[data-message-id="msg_secret"] input[type="password"]`, "sk_live_typed_in_the_page")); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `[data-message-id="msg_secret"] .card-secret-save`)
	waitFor(t, ctx, "the secret card, saved", `!!document.querySelector('[data-message-id="msg_secret"] .node-card[data-status="approved"]')`)
	if v, err := rt.secrets.Get(ctx, "STRIPE_API_KEY"); err != nil || v != "sk_live_typed_in_the_page" {
		t.Fatalf("the secret saved from the page: %q, %v", v, err)
	}
	screenshot(t, ctx, "node-computer-cards-answered-1280.png", 1280)

	// A file attached in the composer goes with the message, shown in its bubble.
	csv := filepath.Join(t.TempDir(), "sales.csv")
	os.WriteFile(csv, []byte("region,total\nnorth,12\n"), 0o644)
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(`#node-attach`, []string{csv})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the file attached to the next message", `document.querySelector('.node-attached li')?.textContent.includes('sales.csv')`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(`#node-input`, "Here are the sales figures.")); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#node-send`)
	waitFor(t, ctx, "the attachment in the sent message", `[...document.querySelectorAll('.node-msg.person .node-attached-file')].some((a) => a.textContent.includes('sales.csv'))`)
	screenshot(t, ctx, "node-attached-390.png", 390)

	// What the node may use is in its settings, and taken back from there.
	press(t, ctx, `.node-settings-open`)
	waitFor(t, ctx, "the kept answer in the node's settings", `document.querySelector('#node-kept li')?.textContent.includes('/home/me/code/shop')`)
	screenshot(t, ctx, "node-kept-answers-1280.png", 1280)
	press(t, ctx, `#node-kept li .btn`)
	waitFor(t, ctx, "the answer taken back", `!document.querySelector('#node-kept li') && document.querySelector('.node-kept')?.textContent.includes('asks you first')`)
}

// tinyPNG is a small picture, as a node's screenshot would be.
func tinyPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 240, 120))
	for x := 0; x < 240; x++ {
		for y := 0; y < 120; y++ {
			img.Set(x, y, color.RGBA{R: uint8(x), G: 90, B: uint8(200 - y), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
