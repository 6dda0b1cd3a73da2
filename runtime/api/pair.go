package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Pairing a phone through the relay.
//
// `ensemble pair` (or the Settings page) asks for a link: https://<relay host>/pair#s=<secret>, a
// 128-bit secret that works once, within five minutes, and lives only in this process's memory, by
// hash. The secret is in the fragment, which browsers never send: the page's own script strips it
// from history and posts it to POST /api/pair. That makes a paired device: a 256-bit token the phone
// keeps as a __Host- cookie (HttpOnly, Secure, SameSite=Strict), of which the database keeps only
// the SHA-256. Removing the device signs the phone out.
const (
	deviceCookie    = "__Host-ensemble_device"
	pairSecretLife  = 5 * time.Minute
	deviceCookieAge = 400 * 24 * time.Hour // the most a browser keeps a cookie
	pairFailLimit   = 10                   // failed pairing attempts a minute, then 429
	lastSeenEvery   = time.Minute
)

// pairing holds the pairing secrets not yet used, by hash, and recent failed attempts.
type pairing struct {
	mu       sync.Mutex // guards the following fields
	secrets  map[string]time.Time
	failures []time.Time
}

// PairLink is a one-time link that pairs a phone.
type PairLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// PairedDevice is a phone that was paired.
type PairedDevice struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastSeenAt *time.Time `json:"lastSeenAt,omitempty"`
}

// relayOrigin is the only Origin a browser reaching the runtime through the relay has.
func (s *Server) relayOrigin() string { return "https://" + s.opts.Relay }

// viaRelay reports whether r was addressed to the runtime's relay name.
func (s *Server) viaRelay(r *http.Request) bool {
	if s.opts.Relay == "" {
		return false
	}
	h := r.Host
	if hh, port, err := net.SplitHostPort(h); err == nil && port == "443" {
		h = hh
	}
	return strings.EqualFold(h, s.opts.Relay)
}

// NewPairLink makes a one-time pairing link; an error when phone access (the relay) is off.
func (s *Server) NewPairLink() (PairLink, error) {
	if s.opts.Relay == "" {
		return PairLink{}, errors.New("Phone access is off: start Ensemble with --relay <relay name> to pair a phone.")
	}
	secret := randomText(16)
	now := s.now()
	exp := now.Add(pairSecretLife)
	s.pairs.mu.Lock()
	defer s.pairs.mu.Unlock()
	if s.pairs.secrets == nil {
		s.pairs.secrets = map[string]time.Time{}
	}
	for h, e := range s.pairs.secrets {
		if now.After(e) {
			delete(s.pairs.secrets, h)
		}
	}
	s.pairs.secrets[hashText(secret)] = exp
	return PairLink{URL: s.relayOrigin() + "/pair#s=" + secret, ExpiresAt: exp.UTC()}, nil
}

// takePairSecret spends a secret: it is deleted whether or not it was still good.
func (s *Server) takePairSecret(secret string) (ok, limited bool) {
	h := hashText(secret)
	now := s.now()
	s.pairs.mu.Lock()
	defer s.pairs.mu.Unlock()
	recent := s.pairs.failures[:0]
	for _, t := range s.pairs.failures {
		if now.Sub(t) < time.Minute {
			recent = append(recent, t)
		}
	}
	s.pairs.failures = recent
	if len(recent) >= pairFailLimit {
		return false, true
	}
	exp, found := s.pairs.secrets[h]
	delete(s.pairs.secrets, h)
	if !found || !now.Before(exp) {
		s.pairs.failures = append(s.pairs.failures, now)
		return false, false
	}
	return true, false
}

func (s *Server) mountPair(mux *http.ServeMux, api func(string, http.HandlerFunc)) {
	mux.HandleFunc("GET /pair", s.pairPage)
	mux.HandleFunc("GET /pair.js", s.pairScript)
	mux.HandleFunc("POST /api/pair", s.pair)
	api("POST /api/pair/links", s.newPairLink)
	api("GET /api/pair/devices", s.listDevices)
	api("DELETE /api/pair/devices/{id}", s.revokeDevice)
}

func (s *Server) newPairLink(w http.ResponseWriter, r *http.Request) {
	l, err := s.NewPairLink()
	if err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, l)
}

// pair turns a pairing secret into a paired device and its cookie. Only through the relay, over
// TLS, from the runtime's own relay origin.
func (s *Server) pair(w http.ResponseWriter, r *http.Request) {
	if !s.viaRelay(r) || r.TLS == nil || r.Header.Get("Origin") != s.relayOrigin() {
		writeError(w, http.StatusForbidden, "Pair a phone by scanning the code `ensemble pair` shows; this address cannot pair.")
		return
	}
	var in struct {
		Secret string `json:"secret"`
		Name   string `json:"name"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	ok, limited := s.takePairSecret(in.Secret)
	if limited {
		writeError(w, http.StatusTooManyRequests, "Too many pairing attempts; wait a minute and scan a new code.")
		return
	}
	if !ok {
		writeError(w, http.StatusUnauthorized, "This pairing code was already used or is older than five minutes. Run `ensemble pair` on your computer for a new one.")
		return
	}
	name := deviceName(in.Name, r.UserAgent())
	token := randomText(32)
	id := "phone_" + randomText(9)
	now := s.now().UTC()
	if _, err := s.store.Writer().ExecContext(r.Context(),
		"INSERT INTO paired_devices (id, name, hash, created_at) VALUES (?, ?, ?, ?)",
		id, name, hashText(token), now.Format(time.RFC3339)); err != nil {
		s.fail(w, r, fmt.Errorf("save paired device: %w", err))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: deviceCookie, Value: token, Path: "/", MaxAge: int(deviceCookieAge.Seconds()),
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode,
	})
	s.log.Info("phone paired", "device", id, "name", name)
	writeJSON(w, http.StatusCreated, PairedDevice{ID: id, Name: name, CreatedAt: now})
}

// deviceName is what the list shows: the name the page sent, else a guess from the User-Agent.
func deviceName(sent, ua string) string {
	sent = strings.TrimSpace(sent)
	if sent != "" && utf8.ValidString(sent) {
		if len(sent) > 60 {
			sent = sent[:60]
		}
		return sent
	}
	for _, k := range []string{"iPhone", "iPad", "Android", "Mac OS", "Windows", "Linux"} {
		if strings.Contains(ua, k) {
			return strings.TrimSuffix(k, " OS") + " browser"
		}
	}
	return "Phone"
}

// validDevice reports whether token belongs to a paired device, noting when it was last seen.
func (s *Server) validDevice(ctx context.Context, token string) (bool, error) {
	var id string
	var seen sql.NullString
	err := s.store.Reader().QueryRowContext(ctx, "SELECT id, last_seen_at FROM paired_devices WHERE hash = ?", hashText(token)).Scan(&id, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read paired device: %w", err)
	}
	now := s.now().UTC()
	if t, perr := time.Parse(time.RFC3339, seen.String); !seen.Valid || perr != nil || now.Sub(t) > lastSeenEvery {
		if _, err := s.store.Writer().ExecContext(ctx, "UPDATE paired_devices SET last_seen_at = ? WHERE id = ?", now.Format(time.RFC3339), id); err != nil {
			s.log.Warn("note paired device seen", "err", err)
		}
	}
	return true, nil
}

// PairedDevices lists the paired phones, newest first.
func (s *Server) PairedDevices(ctx context.Context) ([]PairedDevice, error) {
	rows, err := s.store.Reader().QueryContext(ctx, "SELECT id, name, created_at, last_seen_at FROM paired_devices ORDER BY created_at DESC, id")
	if err != nil {
		return nil, fmt.Errorf("list paired devices: %w", err)
	}
	defer rows.Close()
	out := []PairedDevice{}
	for rows.Next() {
		var d PairedDevice
		var created string
		var seen sql.NullString
		if err := rows.Scan(&d.ID, &d.Name, &created, &seen); err != nil {
			return nil, fmt.Errorf("list paired devices: %w", err)
		}
		d.CreatedAt, _ = time.Parse(time.RFC3339, created)
		if t, err := time.Parse(time.RFC3339, seen.String); seen.Valid && err == nil {
			d.LastSeenAt = &t
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func (s *Server) listDevices(w http.ResponseWriter, r *http.Request) {
	ds, err := s.PairedDevices(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"devices": ds, "relay": s.opts.Relay})
}

// revokeDevice signs a phone out: its next request gets 401.
func (s *Server) revokeDevice(w http.ResponseWriter, r *http.Request) {
	res, err := s.store.Writer().ExecContext(r.Context(), "DELETE FROM paired_devices WHERE id = ?", r.PathValue("id"))
	if err != nil {
		s.fail(w, r, fmt.Errorf("revoke paired device: %w", err))
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		writeError(w, http.StatusNotFound, "There is no paired phone with that id; `ensemble pair list` shows them.")
		return
	}
	s.log.Info("phone signed out", "device", r.PathValue("id"))
	w.WriteHeader(http.StatusNoContent)
}

// pairPage is the page a pairing link opens. Its script is a file of its own: the CSP allows no
// inline script.
func (s *Server) pairPage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">`+
		`<title>Pairing with Ensemble</title><script src="/pair.js" defer></script>`+
		`<body style="font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem">`+
		`<h1 style="font-size:1.4rem">Pairing with Ensemble</h1><p id="msg">Pairing this phone…</p></body></html>`)
}

// pairScript takes the secret out of the fragment and out of history, then posts it.
const pairScript = `(async () => {
  const m = /(?:^#|&)s=([A-Za-z0-9_-]+)/.exec(location.hash);
  history.replaceState(null, "", "/pair");
  const msg = document.getElementById("msg");
  if (!m) { msg.textContent = "This pairing link has no code. Run ensemble pair on your computer for a new one."; return; }
  try {
    const r = await fetch("/api/pair", {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json"}, body: JSON.stringify({secret: m[1]})});
    if (r.ok) { location.replace("/"); return; }
    const e = await r.json().catch(() => ({}));
    msg.textContent = e.error || "Pairing failed.";
  } catch (e) { msg.textContent = "Ensemble did not answer; try again."; }
})();
`

func (s *Server) pairScript(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	fmt.Fprint(w, pairScript)
}
