package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

const (
	cookieName     = "ensemble_session"
	sessionLife    = 30 * 24 * time.Hour
	signinLinkLife = 5 * time.Minute
)

// links holds the one-time sign-in codes not yet used, by hash.
type links struct {
	mu    sync.Mutex // guards codes
	codes map[string]time.Time
}

// SigninURL makes a one-time link that signs a browser in: it works once, within five minutes.
func (s *Server) SigninURL(base string) string {
	code := randomText(24)
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	now := s.now()
	for h, exp := range s.links.codes {
		if now.After(exp) {
			delete(s.links.codes, h)
		}
	}
	s.links.codes[hashText(code)] = now.Add(signinLinkLife)
	return strings.TrimSuffix(base, "/") + "/auth/signin?code=" + url.QueryEscape(code)
}

// takeCode spends a sign-in code; false if it is unknown, used or expired.
func (s *Server) takeCode(code string) bool {
	h := hashText(code)
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	exp, ok := s.links.codes[h]
	delete(s.links.codes, h)
	return ok && s.now().Before(exp)
}

// signin turns a one-time code into a browser session cookie and sends the browser to the board.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	if !s.takeCode(r.URL.Query().Get("code")) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, page("Sign-in link used or expired",
			"This sign-in link was already used or is older than five minutes. Run <code>ensemble open</code> for a new one."))
		return
	}
	secret := randomText(32)
	now := s.now()
	_, err := s.store.Writer().ExecContext(r.Context(), "INSERT INTO browser_sessions (hash, created_at, expires_at) VALUES (?, ?, ?)",
		hashText(secret), now.UTC().Format(time.RFC3339), now.Add(sessionLife).UTC().Format(time.RFC3339))
	if err != nil {
		s.fail(w, r, fmt.Errorf("save browser session: %w", err))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: secret, Path: "/", MaxAge: int(sessionLife.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// newSigninLink answers a client holding the launch token with a fresh one-time link, for
// `ensemble open` and the desktop window.
func (s *Server) newSigninLink(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusCreated, map[string]string{"url": s.SigninURL(scheme + "://" + r.Host)})
}

// authed lets a request through with the launch token or a browser session cookie; one through
// the relay, with a paired phone's cookie only (phoneAuthed).
func (s *Server) authed(next http.Handler) http.Handler {
	phone := s.phoneAuthed(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if phoneOf(r) != nil {
			phone.ServeHTTP(w, r)
			return
		}
		ok, err := s.authenticate(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if !ok {
			writeError(w, http.StatusUnauthorized, "Sign in first: open the link `ensemble serve` printed, or run `ensemble open`.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) authenticate(r *http.Request) (bool, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		return ok && s.opts.Token.Equal(tok), nil
	}
	c, err := r.Cookie(cookieName)
	if err != nil {
		return false, nil
	}
	return s.validSession(r.Context(), c.Value)
}

func (s *Server) validSession(ctx context.Context, secret string) (bool, error) {
	var exp string
	err := s.store.Reader().QueryRowContext(ctx, "SELECT expires_at FROM browser_sessions WHERE hash = ?", hashText(secret)).Scan(&exp)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read browser session: %w", err)
	}
	t, err := time.Parse(time.RFC3339, exp)
	return err == nil && s.now().Before(t), nil
}
