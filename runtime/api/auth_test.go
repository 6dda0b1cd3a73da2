package api

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSigninCodeLifetime: a sign-in code works within five minutes of being made and not after,
// once only, and the cookie it sets is HttpOnly, SameSite=Strict, for the whole site.
func TestSigninCodeLifetime(t *testing.T) {
	f := newFixture(t)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := time.Now()
	for _, tc := range []struct {
		age  time.Duration
		want int
	}{
		{0, http.StatusSeeOther},
		{4*time.Minute + 50*time.Second, http.StatusSeeOther},
		{5*time.Minute + time.Second, http.StatusUnauthorized},
		{time.Hour, http.StatusUnauthorized},
	} {
		f.api.now = func() time.Time { return base }
		link := f.api.SigninURL(f.srv.URL)
		f.api.now = func() time.Time { return base.Add(tc.age) }
		resp, err := c.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("a code %v old: %d, want %d", tc.age, resp.StatusCode, tc.want)
			continue
		}
		if tc.want != http.StatusSeeOther {
			continue
		}
		ck := resp.Cookies()
		if len(ck) != 1 || ck[0].Name != cookieName || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/" {
			t.Errorf("cookie %+v", ck)
		}
		if resp, _ := c.Get(link); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a code %v old worked twice", tc.age)
		}
	}
	// A code that was never made, and none.
	f.api.now = time.Now
	for _, link := range []string{f.srv.URL + "/auth/signin?code=" + strings.Repeat("A", 32), f.srv.URL + "/auth/signin"} {
		if resp, _ := c.Get(link); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", link, resp.StatusCode)
		}
	}
}

// TestLaunchTokenComparesWhole: only the token itself passes, not a prefix, an extension, another
// case or an empty token; and an empty LaunchToken lets nothing in.
func TestLaunchTokenComparesWhole(t *testing.T) {
	tok := NewLaunchToken()
	v := tok.Reveal()
	if !tok.Equal(v) {
		t.Fatal("the token does not equal itself")
	}
	for _, s := range []string{"", v[:len(v)-1], v + "x", strings.ToUpper(v), " " + v} {
		if tok.Equal(s) {
			t.Errorf("Equal(%q) = true", s)
		}
	}
	if (LaunchToken{}).Equal("") {
		t.Error("an empty token equals an empty string")
	}
}
