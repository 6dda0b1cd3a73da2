package app

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestUISecretsSealed adds a secret in Settings → Secrets: the page seals the value for this
// computer's key (spec 002 §8.7.2) and sends only the box, the runtime opens it and keeps the
// value, the list shows the name and where it may go, and Remove forgets it.
func TestUISecretsSealed(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	const value = "sk_live_sealed-in-the-page-4242"

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/settings/secrets")); err != nil {
		t.Fatalf("Settings → Secrets: %v", err)
	}
	waitShown(t, ctx, `#secret-form`)
	fp := rt.secrets.SealKey().Fingerprint
	waitFor(t, ctx, "the key's fingerprint", `document.querySelector('#seal-fingerprint .fp')?.textContent === '`+fp+`'`)
	waitFor(t, ctx, "no secrets yet", `!!document.querySelector('#secrets-empty')`)

	// Every request body the page sends from now on is kept to look at.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		window.__bodies = [];
		const f = window.fetch;
		window.fetch = (u, o) => { window.__bodies.push(String(u) + ' ' + (o?.body ?? '')); return f(u, o); };
		return true;
	})()`)); err != nil {
		t.Fatal(err)
	}
	for sel, v := range map[string]string{"#secret-name": "STRIPE_API_KEY", "#secret-value": value, "#secret-allow": "https://api.stripe.com"} {
		if err := setInput(ctx, sel, v); err != nil {
			t.Fatal(err)
		}
	}
	if typ, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#secret-value').type`)); typ != "password" {
		t.Fatalf("the value field is %q, want password", typ)
	}
	at390(t, ctx, "#secrets-settings", "settings-secrets-form-390.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#secret-save`)
	waitFor(t, ctx, "the secret listed, or a sentence why not", `!!document.querySelector('#secrets-list [data-secret="STRIPE_API_KEY"]') || !!document.querySelector('#secrets-settings .set-error')`)
	if msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#secrets-settings .set-error')?.textContent ?? ''`)); msg != "" {
		t.Fatalf("save: %s", msg)
	}
	waitFor(t, ctx, "its allowed origin", `document.querySelector('#secrets-list [data-secret="STRIPE_API_KEY"] .secret-allow')?.textContent.includes('https://api.stripe.com')`)
	waitFor(t, ctx, "the value field emptied", `document.querySelector('#secret-value').value === ''`)

	bodies, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__bodies`))
	if err != nil {
		t.Fatal(err)
	}
	sealed := false
	for _, b := range bodies {
		if strings.Contains(b, value) || strings.Contains(b, "sealed-in-the-page") {
			t.Fatalf("a request carried the value in the clear: %s", b)
		}
		if strings.Contains(b, "/api/secrets/STRIPE_API_KEY/sealed") && strings.Contains(b, `"sealed":{"v":1`) {
			sealed = true
		}
	}
	if !sealed {
		t.Fatalf("no sealed save among %q", bodies)
	}

	// The runtime opened the box and keeps the value, with its allowed origin.
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	var list struct {
		Secrets []struct {
			Name  string   `json:"name"`
			Allow []string `json:"allow"`
		} `json:"secrets"`
	}
	if err := c.do(ctx, "GET", "/api/secrets", nil, &list); err != nil || len(list.Secrets) != 1 || list.Secrets[0].Name != "STRIPE_API_KEY" ||
		len(list.Secrets[0].Allow) != 1 || list.Secrets[0].Allow[0] != "https://api.stripe.com" {
		t.Fatalf("GET /api/secrets: %+v %v", list, err)
	}
	if v, err := rt.secrets.Get(ctx, "STRIPE_API_KEY"); err != nil || v != value {
		t.Fatalf("the runtime holds %q (%v)", v, err)
	}

	screenshot(t, ctx, "settings-secrets-1280.png", 1280)
	at390(t, ctx, "#secrets-settings", "settings-secrets-390.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// Remove asks once more, then forgets it.
	rm := `#secrets-list [data-secret="STRIPE_API_KEY"] button`
	press(t, ctx, rm)
	waitFor(t, ctx, "Remove it", `document.querySelector('`+rm+`')?.textContent.trim() === 'Remove it'`)
	press(t, ctx, rm)
	waitFor(t, ctx, "the secret gone", `!!document.querySelector('#secrets-empty')`)
	if _, err := rt.secrets.Get(ctx, "STRIPE_API_KEY"); err == nil {
		t.Fatal("the runtime still holds the secret")
	}
}

// at390 narrows the page to a phone's width, scrolls sel to the top, and takes a screenshot.
func at390(t *testing.T, ctx context.Context, sel, name string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 900)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('`+sel+`').scrollIntoView({block: 'start'}), true)`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, name, 390)
}
