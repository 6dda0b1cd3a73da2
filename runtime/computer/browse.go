package computer

import (
	"net"
	"net/url"
	"strings"

	"github.com/ensemblework/ensemble/runtime/judge"
)

// RungPublic is a page on the public web, which a tab opens without asking.
const RungPublic Rung = "public"

// decideBrowse: a public page opens; this computer's own addresses and its network's (private
// ranges, .local names, names without a dot) ask once each, kept by address like computer_http's.
// It is pure: no name is looked up, so a public name that resolves to a private address is the
// broker's Network and Refuse to stop.
func decideBrowse(c Call, p Policy) Decision {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return refused("A tab opens http:// or https:// addresses, such as https://example.com/.")
	}
	if u.User != nil {
		return refused("A tab opens no address with a user name or password in it; sign in on the page instead.")
	}
	addr := Address(u)
	if p.Runtime != "" && sameAddr(addr, p.Runtime) {
		return refused(u.Host + " is Ensemble itself, not a website to open or sign in to. Use your Ensemble tools: the board, task and page tools.")
	}
	if !Nearby(u.Hostname()) {
		return Decision{Decision: judge.Allow, Rung: RungPublic}
	}
	if _, ok := match(addr, ScopeAddress, p.Granted); ok {
		return Decision{Decision: judge.Allow, Rung: RungOnce}
	}
	if _, ok := match(addr, ScopeAddress, p.Kept); ok {
		return Decision{Decision: judge.Allow, Rung: RungKept}
	}
	return Decision{Decision: judge.Ask, Rung: RungAsk, Ask: []Scope{{ScopeAddress, addr}}, Always: true,
		Reason: "The address " + addr + " is on this computer or its network, which asks your owner the first time, on a card."}
}

// Nearby reports whether host names this computer or its local network rather than the public
// web: loopback, private and link-local addresses, localhost, .local, .lan, .internal,
// .home.arpa, and names without a dot.
func Nearby(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()
	}
	for _, suffix := range []string{".localhost", ".local", ".lan", ".internal", ".home.arpa", ".intranet", ".corp"} {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return host == "localhost" || !strings.Contains(host, ".")
}
