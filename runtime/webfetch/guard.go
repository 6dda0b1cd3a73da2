package webfetch

import (
	"fmt"
	"net/netip"
)

// Policy decides whether a Fetcher may connect to an address. It is asked at connect
// time with the address the name resolved to, so a public-looking name that resolves to a private
// address, and every redirect, is judged by where the connection would really go.
type Policy func(netip.AddrPort) error

// BlockedError is an address the policy refused, with the kind of network it is on.
type BlockedError struct {
	Addr netip.Addr
	Why  string // "a loopback address (this computer)"
}

func (e *BlockedError) Error() string { return fmt.Sprintf("%s is %s", e.Addr, e.Why) }

// PublicOnly refuses every address that is not on the public internet: a page reached there could
// be this computer's own services, the home network's router or a cloud metadata endpoint, which
// the model must not be able to read or poke.
func PublicOnly(ap netip.AddrPort) error {
	if why := nonPublic(ap.Addr()); why != "" {
		return &BlockedError{Addr: ap.Addr(), Why: why}
	}
	return nil
}

// nonPublic says which kind of non-public address a is, or "" for a public one.
func nonPublic(a netip.Addr) string {
	if !a.IsValid() {
		return "not an IP address"
	}
	a = a.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	switch {
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsLoopback():
		return "a loopback address (this computer)"
	case a.IsPrivate():
		return "a private network address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, p := range reserved {
		if p.prefix.Contains(a) {
			return p.why
		}
	}
	// IPv6 forms that carry an IPv4 address a router may turn back into it.
	if a.Is6() {
		b := a.As16()
		for _, p := range embedding {
			if p.prefix.Contains(a) {
				v4 := netip.AddrFrom4([4]byte(b[p.at : p.at+4]))
				if why := nonPublic(v4); why != "" {
					return why + " (" + v4.String() + " inside an IPv6 address)"
				}
			}
		}
	}
	return ""
}

var reserved = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "an address of this network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"}, // with 255.255.255.255, broadcast
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

// embedding are the IPv6 prefixes whose addresses hold an IPv4 address at byte at: NAT64,
// 6to4 and the old IPv4-compatible form.
var embedding = []struct {
	prefix netip.Prefix
	at     int
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
	{netip.MustParsePrefix("::/96"), 12},
}
