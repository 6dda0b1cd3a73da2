package webfetch

import (
	"net/netip"
	"strings"
	"testing"
)

func TestPublicOnly(t *testing.T) {
	for _, tc := range []struct {
		addr string
		why  string // "" for allowed
	}{
		{"93.184.215.14", ""},
		{"8.8.8.8", ""},
		{"2606:4700:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"127.45.1.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.1.2.3", "private"},
		{"10.0.0.5", "private"},
		{"172.16.4.4", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "this network"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.127.255.254", "carrier-grade NAT"},
		{"255.255.255.255", "reserved"},
		{"198.18.0.1", "benchmarking"},
		{"64:ff9b::7f00:1", "loopback"},  // NAT64 of 127.0.0.1
		{"2002:c0a8:0101::1", "private"}, // 6to4 of 192.168.1.1
		{"64:ff9b::808:808", ""},         // NAT64 of 8.8.8.8
	} {
		t.Run(tc.addr, func(t *testing.T) {
			err := PublicOnly(netip.AddrPortFrom(netip.MustParseAddr(tc.addr), 443))
			switch {
			case tc.why == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
				t.Errorf("got %v, want refused as %s", err, tc.why)
			}
		})
	}
}
