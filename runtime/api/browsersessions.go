package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// browserSessions are the browsers signed in. Those the person chose to keep ("Stay signed in")
// are in the database, which holds only a hash of each cookie's secret; the others are kept in
// memory only, so they end when the runtime does.
type browserSessions struct {
	mu   sync.Mutex                // guards live
	live map[string]browserSession // by the hash of the cookie's secret
}

// browserSession is one signed-in browser: its path's id, the port it signed in on, until when.
type browserSession struct {
	id      string
	port    int
	expires time.Time
}

// start makes a session on port and returns its id and its cookie's secret.
func (b *browserSessions) start(ctx context.Context, s *Server, port int, kept bool) (id, secret string, err error) {
	id, secret = randomText(16), randomText(32)
	now := s.now()
	sess := browserSession{id: id, port: port, expires: now.Add(sessionLife)}
	if !kept {
		b.mu.Lock()
		if b.live == nil {
			b.live = map[string]browserSession{}
		}
		for h, old := range b.live {
			if now.After(old.expires) {
				delete(b.live, h)
			}
		}
		b.live[hashText(secret)] = sess
		b.mu.Unlock()
		return id, secret, nil
	}
	err = s.write(ctx, func(t *ledger.Tx) error {
		if _, err := t.ExecContext(ctx, "DELETE FROM browser_sessions WHERE expires_at < ?", store.Stamp(now)); err != nil {
			return err
		}
		_, err := t.ExecContext(ctx, "INSERT INTO browser_sessions (id, hash, port, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
			id, hashText(secret), port, store.Stamp(now), store.Stamp(sess.expires))
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("save browser session: %w", err)
	}
	return id, secret, nil
}

// valid reports whether secret is the cookie of a session with path id, made on port, not expired.
func (b *browserSessions) valid(ctx context.Context, s *Server, secret, id string, port int) (bool, error) {
	h := hashText(secret)
	b.mu.Lock()
	sess, ok := b.live[h]
	b.mu.Unlock()
	if !ok {
		var exp string
		err := s.store.Reader().QueryRowContext(ctx, "SELECT id, port, expires_at FROM browser_sessions WHERE hash = ?", h).
			Scan(&sess.id, &sess.port, &exp)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read browser session: %w", err)
		}
		if sess.expires, err = store.ParseTime(exp); err != nil {
			return false, nil
		}
	}
	return sess.id == id && sess.port == port && s.now().Before(sess.expires), nil
}

// end ends the session whose cookie's secret this is.
func (b *browserSessions) end(ctx context.Context, s *Server, secret string) error {
	h := hashText(secret)
	b.mu.Lock()
	delete(b.live, h)
	b.mu.Unlock()
	if err := s.write(ctx, func(t *ledger.Tx) error {
		_, err := t.ExecContext(ctx, "DELETE FROM browser_sessions WHERE hash = ?", h)
		return err
	}); err != nil {
		return fmt.Errorf("end browser session: %w", err)
	}
	return nil
}
