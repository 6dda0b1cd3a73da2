package browser

import (
	"context"
	"net/url"
	"strings"

	"github.com/chromedp/chromedp"
)

// pageFacts is what the sign-in heuristics look at, gathered in one evaluation.
type pageFacts struct {
	URL         string `json:"url"`
	Passwords   int    `json:"passwords"`   // visible password fields that are not new-password
	NewPassword int    `json:"newPassword"` // new-password fields (an account form)
	UserFields  int    `json:"userFields"`  // user name, email or one-time-code fields
	CodeFields  int    `json:"codeFields"`  // one-time-code fields
	Captcha     bool   `json:"captcha"`     // a recaptcha, hcaptcha or turnstile frame or widget
	HumanText   string `json:"humanText"`   // the phrase of a human check, when the page says one
	Status      int    `json:"-"`           // the main document's status
	Local       bool   `json:"-"`           // the host is this computer's own
}

// factsJS counts fields and looks for a human check; it reads no value.
const factsJS = `(() => {
  const vis = e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const inputs = [...document.querySelectorAll('input')].filter(vis);
  let passwords = 0, newPassword = 0, userFields = 0, codeFields = 0;
  for (const i of inputs) {
    const t = (i.type || '').toLowerCase(), ac = (i.autocomplete || '').toLowerCase(), n = ((i.name || '') + ' ' + (i.id || '')).toLowerCase();
    if (t === 'password') { if (ac.includes('new-password')) newPassword++; else passwords++; continue; }
    if (ac.includes('one-time-code') || /\b(otp|totp|mfa|2fa|verification.?code)\b/.test(n)) { codeFields++; userFields++; continue; }
    if (t === 'email' || ac.includes('username') || ac === 'email' || /user|login|email|account/.test(n)) userFields++;
  }
  const frames = [...document.querySelectorAll('iframe')].map(f => f.src || '').join(' ');
  const captcha = /recaptcha|hcaptcha|challenges\.cloudflare\.com|turnstile/.test(frames) ||
    !!document.querySelector('.g-recaptcha,.h-captcha,.cf-turnstile,#challenge-form,#cf-challenge-running');
  const text = ((document.title || '') + '\n' + (document.body ? document.body.innerText.slice(0, 3000) : '')).toLowerCase();
  const phrases = ['robot or human', 'verify you are human', 'verify you are a human', 'are you a robot', 'just a moment', 'checking your browser', 'access denied', 'press & hold', 'press and hold'];
  const humanText = phrases.find(p => text.includes(p)) || '';
  return {url: location.href, passwords, newPassword, userFields, codeFields, captcha, humanText};
})()`

// facts gathers a tab's page facts.
func (b *Broker) facts(ctx context.Context, t *tab) (pageFacts, error) {
	var f pageFacts
	err := runUnder(ctx, t.context(), func(c context.Context) error {
		var err error
		f, err = chromedp.Run(c, chromedp.Evaluate[pageFacts](factsJS))
		return err
	})
	if err != nil {
		return f, err
	}
	t.mu.Lock()
	f.Status = t.status
	t.mu.Unlock()
	if u, err := url.Parse(f.URL); err == nil {
		f.Local = isLocalHost(ctx, u.Hostname())
	}
	return f, nil
}

// signInPaths are addresses that ask to sign in.
var signInPaths = []string{"/login", "/log-in", "/signin", "/sign-in", "/sign_in", "/auth", "/session", "/oauth", "/sso", "/account/login", "/accounts/login", "/users/sign_in", "/user/login", "/authorize", "/saml"}

// idpHosts are identity providers: a page there asks for the owner's account.
var idpHosts = []string{"accounts.google.com", "login.microsoftonline.com", "login.live.com", "login.microsoft.com", "appleid.apple.com", "idmsa.apple.com"}

// idpSuffixes are identity providers' tenant domains.
var idpSuffixes = []string{".okta.com", ".oktapreview.com", ".auth0.com", ".onelogin.com", ".b2clogin.com"}

// decideSignIn says whether a page asks for a sign-in or a human check (spec 002 §8.16.1).
// It is pure: the facts are gathered elsewhere.
func decideSignIn(f pageFacts, private bool) *SignIn {
	u, err := url.Parse(f.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	hint := f.Local || private
	human := f.Captcha || f.HumanText != ""
	if human && f.Passwords == 0 {
		why := "a captcha"
		if f.HumanText != "" {
			why = "\"" + f.HumanText + "\""
		}
		return &SignIn{Purpose: "human_check", Origin: origin, Why: why, HintOnly: hint}
	}
	why := signInWhy(f, u)
	if why == "" {
		return nil
	}
	return &SignIn{Purpose: "sign_in", Origin: origin, Why: why, HintOnly: hint}
}

func signInWhy(f pageFacts, u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	path := strings.ToLower(u.Path)
	switch {
	case f.Status == 401:
		return "401"
	case isIDP(host, path):
		return host
	case f.Passwords == 1 && f.NewPassword == 0:
		return "a password field"
	case f.UserFields > 0 && isSignInPath(path):
		return "a sign-in address"
	}
	return ""
}

func isIDP(host, path string) bool {
	for _, h := range idpHosts {
		if host == h {
			return true
		}
	}
	for _, s := range idpSuffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	if host == "github.com" {
		return path == "/login" || strings.HasPrefix(path, "/login/") || path == "/session" || strings.HasPrefix(path, "/sessions/")
	}
	return false
}

func isSignInPath(path string) bool {
	for _, p := range signInPaths {
		if path == p || strings.HasPrefix(path, p+"/") || strings.HasPrefix(path, p+"?") || strings.HasSuffix(path, p) {
			return true
		}
	}
	return false
}
