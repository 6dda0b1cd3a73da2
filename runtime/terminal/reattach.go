package terminal

import (
	"errors"
)

// detacher is a process that can be let go of without ending it: a shell in a terminal host.
type detacher interface{ detach() }

// Reattach attaches to every terminal host a Manager with HostOptions left running (the last
// runtime's, before it stopped or was upgraded), rebuilds each one's screen from the output its
// host kept, and returns the sessions, with the ids and [Session.Node] they had. A host that
// has died leaves files behind, which are removed. Reattached sessions count towards Options.Max
// but are never refused for it: they are running already.
func (m *Manager) Reattach() []*Session {
	if m.opts.Host == nil || !hostsWork {
		return nil
	}
	dir := m.opts.Host.dir()
	infos, err := readInfos(dir)
	if err != nil {
		m.opts.Log.Warn("terminals: the last runtime's are not reattached", "err", err)
		return nil
	}
	var out []*Session
	for _, in := range infos {
		if m.Get(in.ID) != nil {
			continue
		}
		p, cols, rows, replay, err := dialHost(dir, in.ID, in.Token)
		if errors.Is(err, errHostGone) {
			removeHostFiles(dir, in.ID)
			m.opts.Log.Info("terminal gone while the runtime was away", "id", in.ID)
			continue
		}
		if err != nil {
			m.opts.Log.Warn("terminal not reattached", "id", in.ID, "err", err)
			continue
		}
		cols, rows = clampSize(cols, rows)
		s := newSession(in.ID, in.Folder, in.Command, cols, rows)
		s.node, s.started, s.proc = in.Node, in.Started, p
		s.restore(replay) // before it is returned: its screen is whole from the start
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			p.detach()
			s.end(-1) // its reply pump with it
			break
		}
		m.runLocked(s)
		m.mu.Unlock()
		m.opts.Log.Info("terminal reattached", "id", in.ID, "node", in.Node, "folder", in.Folder)
		out = append(out, s)
	}
	return out
}

// Detach refuses new sessions and lets go of every open one: a session in a terminal host goes on
// without this Manager, for the next one's Reattach; one on a PTY of this process's own ends, as
// in Close. It returns once every session here has ended.
func (m *Manager) Detach() {
	m.endAll(func(s *Session) {
		if d, ok := s.proc.(detacher); ok {
			d.detach()
			<-s.done
			return
		}
		s.Close()
	})
}
