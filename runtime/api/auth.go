package api

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/runtime/httpin"
)

const (
	sessionLife    = 30 * 24 * time.Hour
	signinLinkLife = 5 * time.Minute
	// maxSigninForm caps the sign-in form's body: a code and a checkbox.
	maxSigninForm = 4 << 10
)

// links holds the one-time sign-in codes not yet used, by hash.
type links struct {
	mu    sync.Mutex // guards codes
	codes map[string]signinCode
}

// signinCode is a one-time sign-in code: until when it works, and whether it signs the browser in at
// once (the desktop window's own) rather than showing the sign-in page, where the person chooses
// whether to stay signed in.
type signinCode struct {
	expires time.Time
	direct  bool
}

// SigninURL makes a one-time link to the sign-in page, where the person chooses whether this
// browser stays signed in: it works once, within five minutes.
func (s *Server) SigninURL(base string) string { return s.signinURL(base, false) }

// DirectSigninURL makes a one-time link that signs a browser in at once, until the runtime stops,
// without asking: for the desktop window, which opens the runtime it runs.
func (s *Server) DirectSigninURL(base string) string { return s.signinURL(base, true) }

func (s *Server) signinURL(base string, direct bool) string {
	code := randomText(24)
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	now := s.now()
	for h, c := range s.links.codes {
		if now.After(c.expires) {
			delete(s.links.codes, h)
		}
	}
	s.links.codes[hashText(code)] = signinCode{expires: now.Add(signinLinkLife), direct: direct}
	return strings.TrimSuffix(base, "/") + "/auth/signin?code=" + url.QueryEscape(code)
}

// peekCode says whether a sign-in code works, and how, without spending it.
func (s *Server) peekCode(code string) (signinCode, bool) {
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	c, ok := s.links.codes[hashText(code)]
	return c, ok && s.now().Before(c.expires)
}

// takeCode spends a sign-in code; false if it is unknown, used or expired.
func (s *Server) takeCode(code string) bool {
	h := hashText(code)
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	c, ok := s.links.codes[h]
	delete(s.links.codes, h)
	return ok && s.now().Before(c.expires)
}

// openCommand is the command that makes a new sign-in link, as a person at this computer types it.
func (s *Server) openCommand() string {
	c := s.opts.Command
	if c == "" {
		c = "ensemble"
	}
	return c + " open"
}

// signInSentence says how a browser on this computer signs in (again).
func (s *Server) signInSentence() string {
	return "Run `" + s.openCommand() + "` on this computer for a new sign-in link."
}

// usedLink answers a sign-in code that does not work.
func (s *Server) usedLink(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, page("Sign-in link used or expired",
		"This sign-in link was already used or is older than five minutes. Run <code>"+html.EscapeString(s.openCommand())+"</code> for a new one."))
}

// signinPage shows the sign-in page of a one-time link: a direct link signs the browser in at once;
// any other asks whether to stay signed in, and signs in when the form is sent (POST /auth/signin).
func (s *Server) signinPage(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	c, ok := s.peekCode(code)
	switch {
	case !ok:
		s.usedLink(w)
	case c.direct:
		if !s.takeCode(code) {
			s.usedLink(w)
			return
		}
		s.startSession(w, r, false)
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		// The link's code goes nowhere else; "no-referrer" would also make the form's POST say
		// Origin: null, which the guard refuses.
		w.Header().Set("Referrer-Policy", "same-origin")
		fmt.Fprint(w, page("Sign in to Ensemble", `This link signs this browser in to Ensemble on this computer.</p>`+
			`<form method="post" action="/auth/signin"><input type="hidden" name="code" value="`+html.EscapeString(code)+`">`+
			`<p><label><input type="checkbox" name="stay" value="1" id="stay"> Stay signed in on this browser</label><br>`+
			`<small>Otherwise you are signed out when Ensemble restarts. Either way, Settings has Sign out.</small></p>`+
			`<p><button type="submit" id="signin" style="font:inherit;padding:.4rem 1.2rem">Sign in</button></p></form><p>`))
	}
}

// signin signs a browser in from the sign-in page's form: the one-time code, and stay=1 to stay
// signed in across restarts.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	if mt := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(mt), "application/x-www-form-urlencoded") {
		writeError(w, http.StatusUnsupportedMediaType, "Sign in from the sign-in page's form.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxSigninForm)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, "The sign-in form could not be read; open the sign-in link again.")
		return
	}
	if !s.takeCode(r.PostForm.Get("code")) {
		s.usedLink(w)
		return
	}
	s.startSession(w, r, r.PostForm.Get("stay") == "1")
}

// startSession makes a browser session, sets its cookie and sends the browser to the board with the
// session's path in the fragment, which no server sees (the UI keeps it for its API requests).
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, kept bool) {
	port := localPort(r)
	id, secret, err := s.sessions.start(r.Context(), s, port, kept)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c := &http.Cookie{
		Name: sessionCookie(port), Value: secret, Path: sessionPath(id) + "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	}
	if kept {
		c.MaxAge = int(sessionLife.Seconds())
	}
	http.SetCookie(w, c)
	s.log.Info("a browser signed in", "stay", kept, "port", port)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, "/#signin="+id, http.StatusSeeOther)
}

// signout ends the browser session the request came with, and has the browser forget its cookie.
func (s *Server) signout(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := sessionOf(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "Sign out ends a browser's session, and this request did not come with one.")
		return
	}
	if err := s.sessions.end(r.Context(), s, secret); err != nil {
		s.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie(localPort(r)), Value: "", Path: sessionPath(id) + "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	s.log.Info("a browser signed out", "port", localPort(r))
	writeJSON(w, http.StatusOK, map[string]any{"signedOut": true, "signIn": s.signInSentence()})
}

// newSigninLink answers a client holding the launch token with a fresh one-time link to the sign-in
// page, for `ensemble open`.
func (s *Server) newSigninLink(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusCreated, map[string]string{"url": s.SigninURL(scheme + "://" + r.Host)})
}

// authed lets a request through with the launch token or a browser session's cookie under its
// own path; one through the relay, with a paired phone's cookie only (phoneAuthed).
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
			writeError(w, http.StatusUnauthorized, "Sign in first: open the sign-in link Ensemble printed when it started, or run `"+s.openCommand()+"` on this computer.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) authenticate(r *http.Request) (bool, error) {
	if r.Header.Get("Authorization") != "" {
		tok, ok := httpin.Bearer(r.Header)
		return ok && s.opts.Token.Equal(tok), nil
	}
	id, secret, ok := sessionOf(r)
	if !ok {
		return false, nil
	}
	return s.sessions.valid(r.Context(), s, secret, id, localPort(r))
}

// localPort is the port of the listener the request came in on: the runtime's own, whatever Host
// the request names.
func localPort(r *http.Request) int {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if t, ok := a.(*net.TCPAddr); ok {
			return t.Port
		}
	}
	return 0
}

// Browser sessions.
//
// Cookies are kept apart by host, not by port: a cookie 127.0.0.1:4000 sets goes with every request
// the browser makes to any other program listening on 127.0.0.1, which could replay it. So a session
// cookie is scoped to a path of its own, /s/<id>/, that only the runtime's own page knows (it gets
// it in the sign-in redirect's fragment and keeps it in its origin's storage, which is per port); the
// UI sends its API requests under that path, which the runtime serves as /api/…. A page from
// another port does not know the path, so the browser never sends it the cookie. The session is
// also bound, on the runtime's side, to the port it was made on: a cookie taken from a browser that
// once signed in on another port (where another program listens now) is refused. Its name carries
// the port, so two runtimes on one computer do not overwrite each other's.

// sessionPrefix begins a browser session's path.
const sessionPrefix = "/s/"

func sessionPath(id string) string { return sessionPrefix + id }

// sessionCookie is the name of the browser session cookie of the runtime on port.
func sessionCookie(port int) string { return fmt.Sprintf("ensemble_session_%d", port) }

type sessionKey struct{}

// sessionPaths serves /s/<id>/api/… as /api/…, noting <id> for [sessionOf]; any other path under
// /s/ is not found.
func sessionPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, sessionPrefix)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		id, tail, _ := strings.Cut(rest, "/")
		if id == "" || !strings.HasPrefix(tail, "api/") {
			writeError(w, http.StatusNotFound, "There is no such API route.")
			return
		}
		u := *r.URL
		u.Path, u.RawPath = "/"+tail, ""
		r2 := r.WithContext(context.WithValue(r.Context(), sessionKey{}, id))
		r2.URL = &u
		r2.RequestURI = u.RequestURI()
		next.ServeHTTP(w, r2)
	})
}

// sessionOf is the browser session a request names: the id of its path and its cookie's secret.
func sessionOf(r *http.Request) (id, secret string, ok bool) {
	id, ok = r.Context().Value(sessionKey{}).(string)
	if !ok {
		return "", "", false
	}
	c, err := r.Cookie(sessionCookie(localPort(r)))
	if err != nil || c.Value == "" {
		return "", "", false
	}
	return id, c.Value, true
}
