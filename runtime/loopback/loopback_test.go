package loopback

import "testing"

func TestHost(t *testing.T) {
	for in, want := range map[string]bool{
		"127.0.0.1:4000": true, "[::1]:4000": true, "localhost": true, "LOCALHOST:80": true, "127.9.9.9": true, "::1": true,
		"192.168.1.5:4000": false, "example.com": false, "": false, "0.0.0.0:4000": false, "[::]:80": false,
	} {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %v, want %v", in, got, want)
		}
	}
}
