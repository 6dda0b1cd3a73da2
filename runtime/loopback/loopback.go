// Package loopback says whether an address names this computer. The runtime, the context bridge
// and a turn's MCP server answer only on loopback, and a base URL or clone URL given in a request
// may point only there.
package loopback

import (
	"net"
	"strings"
)

// Host reports whether host (a Host header, a URL's host or a remote address, with or without a
// port) names this computer: localhost, 127.0.0.0/8 or ::1.
func Host(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
