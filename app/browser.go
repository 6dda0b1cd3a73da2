package app

import (
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ensemblework/ensemble/browser"
)

// ensembleItself is the sentence a node or a run hears for Ensemble's own web app (spec 002
// §8.16, never Ensemble itself).
const ensembleItself = " is Ensemble itself, not a website to open or sign in to. Use your Ensemble tools: the board, task and page tools (and ask_person in a run)."

// refuseEnsemble is the broker's Config.Refuse: why an address is Ensemble's own UI (the
// runtime's loopback address, under any loopback name) or its relay (the relay's name and the
// phone addresses under it), or "".
func refuseEnsemble(listen, relayName string) func(string) string {
	_, port, _ := net.SplitHostPort(listen)
	relayHost := relayName
	if h, _, err := net.SplitHostPort(relayName); err == nil {
		relayHost = h
	}
	relayHost = strings.ToLower(relayHost)
	return func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return ""
		}
		host := strings.ToLower(u.Hostname())
		p := u.Port()
		if p == "" {
			p = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443"}[u.Scheme]
		}
		ip := net.ParseIP(host)
		loop := host == "localhost" || strings.HasSuffix(host, ".localhost") || ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
		switch {
		case port != "" && loop && p == port:
			return u.Host + ensembleItself
		case relayHost != "" && (host == relayHost || strings.HasSuffix(host, "."+relayHost)):
			return u.Host + ensembleItself
		}
		return ""
	}
}

// hasDisplay reports whether this computer has a screen for the clean browser's window.
func hasDisplay() bool {
	if runtime.GOOS != "linux" && runtime.GOOS != "freebsd" {
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// newBroker makes the Chromium broker nodes and runs browse with (spec 002 §8.16). Chromium
// starts on first use, so making it costs nothing at start-up. onSignIn is node.Service.OnSignIn,
// late-bound: the broker is made before the node service it calls.
func newBroker(dataDir string, refuse func(string) string, onSignIn func(browser.Work, string, bool, string), log *slog.Logger) *browser.Broker {
	cfg := browser.Config{DataDir: filepath.Join(dataDir, "browser"), Refuse: refuse, OnSignIn: onSignIn, Headless: !hasDisplay(), Logger: log}
	return browser.New(cfg)
}

// relayName is the relay's name, or "" while phone access is off.
func relayName(cfg *relayConfig) string {
	if cfg == nil {
		return ""
	}
	return cfg.Relay
}
