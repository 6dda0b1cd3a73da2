package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
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
	pairFailLimit   = 10                   // failed pairing attempts a minute from one source, then 429
	pairFailSources = 4096                 // sources whose failures are remembered at once
	lastSeenEvery   = time.Minute
)

// pairing holds the pairing secrets not yet used, by hash, and each source's recent failed
// attempts. Failures count against the source that made them (an IPv4 address or an IPv6 /64, as
// the relay reports the phone's address), never against the runtime as a whole: someone guessing
// from one place cannot keep the owner's valid link from working anywhere else.
type pairing struct {
	mu       sync.Mutex // guards the following fields
	secrets  map[string]time.Time
	failures map[string][]time.Time
}

// PhoneAccess is the runtime's tunnel to its relay, as the API shows and changes it.
type PhoneAccess interface {
	// Status is the tunnel as it is now.
	Status() PhoneStatus
	// Rotate gives the runtime a new phone key, and with it a new address (and certificate), and
	// returns the new host. The API signs every paired phone out first.
	Rotate(ctx context.Context) (host string, err error)
}

// PhoneStatus is phone access as Settings and `ensemble status` show it.
type PhoneStatus struct {
	Host string `json:"host"`
	Up   bool   `json:"up"`
	// Taken counts the times another runtime with this computer's phone key took its address on
	// the relay (since the key was made or rotated); TakenAt is the last, TakenFrom where from.
	Taken     int        `json:"taken,omitempty"`
	TakenAt   *time.Time `json:"takenAt,omitempty"`
	TakenFrom string     `json:"takenFrom,omitempty"`
	// Error is why the tunnel is down, while it is.
	Error string `json:"error,omitempty"`
}

// TakenSentence is what the person is told when another runtime took the phone address.
func (st PhoneStatus) TakenSentence() string {
	if st.Taken == 0 {
		return ""
	}
	from := ""
	if st.TakenFrom != "" {
		from = " from " + st.TakenFrom
	}
	return "Another copy of Ensemble with this computer's phone key took its phone address" + from +
		"; Ensemble keeps taking it back. If you did not start one, someone has a copy of the key: " +
		"give this computer a new phone address (Settings → Phones, or `ensemble pair rotate`), which signs every phone out."
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

// relayHost is the runtime's name on its relay (<id>.<relay-domain>); "" while phone access is off.
func (s *Server) relayHost() string {
	if h := s.relay.Load(); h != nil {
		return *h
	}
	return ""
}

// relayOrigin is the only Origin a browser reaching the runtime through the relay has.
func (s *Server) relayOrigin() string { return "https://" + s.relayHost() }

// NewPairLink makes a one-time pairing link; an error when phone access (the relay) is off.
func (s *Server) NewPairLink() (PairLink, error) {
	if s.relayHost() == "" {
		return PairLink{}, errors.New("Phone access is off: turn it on with `ensemble pair setup <relay>` and start Ensemble again to pair a phone.")
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

// takePairSecret spends a secret from source: it is deleted whether or not it was still good. A
// source that failed pairFailLimit times in the last minute is limited: its attempts are refused
// unread until its failures age.
func (s *Server) takePairSecret(source, secret string) (ok, limited bool) {
	h := hashText(secret)
	now := s.now()
	s.pairs.mu.Lock()
	defer s.pairs.mu.Unlock()
	if s.pairs.failures == nil {
		s.pairs.failures = map[string][]time.Time{}
	}
	recent := func(ts []time.Time) []time.Time {
		kept := ts[:0]
		for _, t := range ts {
			if now.Sub(t) < time.Minute {
				kept = append(kept, t)
			}
		}
		return kept
	}
	fails := recent(s.pairs.failures[source])
	if len(fails) >= pairFailLimit {
		s.pairs.failures[source] = fails
		return false, true
	}
	exp, found := s.pairs.secrets[h]
	delete(s.pairs.secrets, h)
	if found && now.Before(exp) {
		return true, false
	}
	if len(fails) == 0 && len(s.pairs.failures) >= pairFailSources {
		// Forget the sources whose failures have aged; if every one is recent, the one that failed
		// least recently.
		oldest, at := "", time.Time{}
		for src, ts := range s.pairs.failures {
			if ts = recent(ts); len(ts) == 0 {
				delete(s.pairs.failures, src)
			} else if s.pairs.failures[src] = ts; oldest == "" || ts[len(ts)-1].Before(at) {
				oldest, at = src, ts[len(ts)-1]
			}
		}
		if len(s.pairs.failures) >= pairFailSources {
			delete(s.pairs.failures, oldest)
		}
	}
	s.pairs.failures[source] = append(fails, now)
	return false, false
}

func (s *Server) mountPair(mux *http.ServeMux, api func(string, http.HandlerFunc)) {
	mux.HandleFunc("GET /pair", s.pairPage)
	mux.HandleFunc("GET /pair.js", s.pairScript)
	mux.HandleFunc("POST /api/pair", s.pair)
	api("POST /api/pair/links", s.newPairLink)
	api("GET /api/pair/devices", s.listDevices)
	api("DELETE /api/pair/devices/{id}", s.revokeDevice)
	api("POST /api/pair/rotate", s.rotate)
}

func (s *Server) newPairLink(w http.ResponseWriter, r *http.Request) {
	l, err := s.NewPairLink()
	if err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, l)
}

// pair turns a pairing secret into a paired device and its cookie. Only through the relay (the
// guard has checked its TLS and name), from the runtime's own relay origin.
func (s *Server) pair(w http.ResponseWriter, r *http.Request) {
	pc := phoneOf(r)
	if pc == nil || r.Header.Get("Origin") != s.relayOrigin() {
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
	ok, limited := s.takePairSecret(pc.source, in.Secret)
	if limited {
		writeError(w, http.StatusTooManyRequests, "Too many wrong pairing codes came from this network; wait a minute, then scan a new code.")
		return
	}
	if !ok {
		writeError(w, http.StatusUnauthorized, "This pairing code was already used or is older than five minutes: scan a new one (on your computer, Settings → Phones → Pair a phone).")
		return
	}
	name := deviceName(in.Name, r.UserAgent())
	token := randomText(32)
	id := "phone_" + randomText(9)
	now := s.now().UTC()
	if err := s.write(r.Context(), func(t *ledger.Tx) error {
		_, err := t.ExecContext(t.Context(), "INSERT INTO paired_devices (id, name, hash, created_at) VALUES (?, ?, ?, ?)",
			id, name, hashText(token), store.Stamp(now))
		return err
	}); err != nil {
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

// validDevice returns the id of the paired device token belongs to ("" for none), noting when it
// was last seen.
func (s *Server) validDevice(ctx context.Context, token string) (string, error) {
	var id string
	var seen sql.NullString
	err := s.store.Reader().QueryRowContext(ctx, "SELECT id, last_seen_at FROM paired_devices WHERE hash = ?", hashText(token)).Scan(&id, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read paired device: %w", err)
	}
	now := s.now().UTC()
	if t, perr := store.ParseTime(seen.String); !seen.Valid || perr != nil || now.Sub(t) > lastSeenEvery {
		if err := s.write(ctx, func(t *ledger.Tx) error {
			_, err := t.ExecContext(t.Context(), "UPDATE paired_devices SET last_seen_at = ? WHERE id = ?", store.Stamp(now), id)
			return err
		}); err != nil {
			s.log.Warn("note paired device seen", "err", err)
		}
	}
	return id, nil
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
		d.CreatedAt, _ = store.ParseTime(created)
		if t, err := store.ParseTime(seen.String); seen.Valid && err == nil {
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
	out := map[string]any{"devices": ds, "relay": s.relayHost()}
	if s.opts.Phones != nil {
		st := s.opts.Phones.Status()
		out["access"] = map[string]any{"status": st, "taken": st.TakenSentence()}
	}
	writeJSON(w, http.StatusOK, out)
}

// revokeDevice signs a phone out: its next request gets 401, and what it has open ends before the
// answer.
func (s *Server) revokeDevice(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var n int64
	err := s.write(r.Context(), func(t *ledger.Tx) error {
		res, err := t.ExecContext(t.Context(), "DELETE FROM paired_devices WHERE id = ?", id)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		s.fail(w, r, fmt.Errorf("revoke paired device: %w", err))
		return
	}
	if n == 0 {
		writeError(w, http.StatusNotFound, "There is no paired phone with that id; `ensemble pair list` shows them.")
		return
	}
	s.phones.end(id)
	s.log.Info("phone signed out", "device", id)
	w.WriteHeader(http.StatusNoContent)
}

// signOutAll signs every paired phone out, ending what they have open; it returns how many.
func (s *Server) signOutAll(ctx context.Context) (int, error) {
	ds, err := s.PairedDevices(ctx)
	if err != nil {
		return 0, err
	}
	if err := s.write(ctx, func(t *ledger.Tx) error {
		_, err := t.ExecContext(t.Context(), "DELETE FROM paired_devices")
		return err
	}); err != nil {
		return 0, fmt.Errorf("sign phones out: %w", err)
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	s.phones.end(ids...)
	return len(ds), nil
}

// rotate gives the runtime a new phone address: every phone is signed out first (so a cookie a
// copy of the old key collected opens nothing), then the tunnel logs in with a new key under a new
// name. Only from the computer: a phone cannot sign every phone out this way.
func (s *Server) rotate(w http.ResponseWriter, r *http.Request) {
	if s.opts.Phones == nil {
		writeError(w, http.StatusConflict, "Phone access is off, so there is no phone address to change.")
		return
	}
	if phoneOf(r) != nil {
		writeError(w, http.StatusForbidden, "Give Ensemble a new phone address from the computer itself (Settings → Phones, or `ensemble pair rotate`).")
		return
	}
	n, err := s.signOutAll(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	host, err := s.opts.Phones.Rotate(r.Context())
	if err != nil {
		s.fail(w, r, fmt.Errorf("rotate the phone key: %w", err))
		return
	}
	s.relay.Store(&host)
	s.log.Warn("phone address rotated; every phone was signed out", "host", host, "phones", n)
	writeJSON(w, http.StatusOK, map[string]any{"host": host, "url": "https://" + host + "/", "signedOut": n})
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
  if (!m) { msg.textContent = "This pairing link has no code: scan the code your computer shows (Settings → Phones → Pair a phone)."; return; }
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
