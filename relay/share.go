package relay

import (
	"net"
	"net/netip"
	"sync"
)

// share counts what each source holds at once, so that one source cannot take what the others
// need: a public relay's connections, one tunnel's phone connections, the tunnels themselves.
type share struct {
	mu  sync.Mutex // guards n
	max int
	n   map[string]int
}

func newShare(max int) *share { return &share{max: max, n: map[string]int{}} }

// take counts one more for src, or reports false when src already holds its share.
func (s *share) take(src string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[src] >= s.max {
		return false
	}
	s.n[src]++
	return true
}

// give returns one that take counted.
func (s *share) give(src string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[src]--; s.n[src] <= 0 {
		delete(s.n, src)
	}
}

// Source is who a connection from addr ("ip:port" or an IP) counts against: its IPv4 address, or
// the /64 an IPv6 address is in (one household or phone has a whole /64, so counting single IPv6
// addresses would count nothing). The runtime counts phones' sources the same way.
func Source(addr string) string {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}
