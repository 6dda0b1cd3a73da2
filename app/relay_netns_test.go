//go:build linux

package app

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"golang.org/x/sys/unix"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/relay"
	"github.com/ensemblework/ensemble/runtime/api"
	"github.com/ensemblework/ensemble/runtime/needs"
)

// TestRelayOfflineE2E is issue 8's acceptance, offline on one machine, with three network
// namespaces joined only through the relay's:
//
//	runtime 10.201.1.2 ──veth── 10.201.1.1 relay 10.201.2.1 ──veth── 10.201.2.2 phone
//	                                 (Pebble, its DNS)
//
// The relay namespace does not forward, so the runtime and the phone cannot reach each other
// (checked); the runtime dials out to the relay, the phone (real Chromium) connects to it. Pebble
// issues the runtime's certificate; its tls-alpn-01 check goes through the relay's passthrough to
// the runtime. The phone pairs by the link the QR code holds, loads the board over the relay, sees
// a task arrive live and answers a Needs me question; a tap on every relay connection finds
// neither the page's markers, the device cookie nor the pairing secret in the relay's traffic.
//
// The relay and the runtime run in this process, each on sockets made inside its own namespace
// ([netLab.do]): every byte between them crosses the veth links. Keeping the runtime in-process is
// what lets the test put a run-less question on Needs me (no API makes one; only runs ask).
// Chromium, Pebble and its DNS server run as processes under `ip netns exec`.
func TestRelayOfflineE2E(t *testing.T) {
	needUI(t)
	chromium := needBrowser(t)
	w := newRelayWorld(t, chromium)
	lab, step, tap := w.lab, w.step, w.tap

	// No way around the relay: the phone cannot reach the runtime, nor the runtime the phone,
	// though each has a listener on its own address and a default route through the relay.
	lab.checkIsolated(t)
	step("runtime and phone cannot reach each other; both reach the relay")

	rt := w.startRuntime(t, lab.runtime, relayForRuntime, "data", nil)
	host := rt.phones.Host()
	origin := "https://" + host
	leaf := w.waitCert(t, host)
	step("certificate for %s issued by %q through the relay", host, leaf.Issuer.CommonName)

	// The local API, as the command line and the desktop window use it (launch token).
	local := w.local(t, rt)
	ctx0 := context.Background()
	boardMarker, liveMarker, needMarker := "board-"+randomHex(8), "live-"+randomHex(8), "need-"+randomHex(8)
	if err := local.do(ctx0, "POST", "/api/tasks", map[string]any{"title": "Made before pairing " + boardMarker}, nil); err != nil {
		t.Fatal(err)
	}
	// The link `ensemble pair` prints and draws as a QR code.
	var link api.PairLink
	if err := local.do(ctx0, "POST", "/api/pair/links", nil, &link); err != nil {
		t.Fatal(err)
	}
	secret, ok := strings.CutPrefix(link.URL, origin+"/pair#s=")
	if !ok || secret == "" {
		t.Fatalf("pairing link %q is not for %s", link.URL, origin)
	}
	if err := writeQR(io.Discard, link.URL, false); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(w.chromium(t), 60*time.Second)
	defer cancel()
	step("Chromium started in %s", lab.phone)

	// Pairing: the link opens /pair, whose script takes the secret out of the address and history,
	// posts it, and goes to the board.
	if err := chromedp.Do(ctx, chromedp.Navigate(link.URL)); err != nil {
		t.Fatalf("opening the pairing link: %v", err)
	}
	waitAcrossNavigation(t, ctx, "the board after pairing", `location.pathname === '/' && !!document.querySelector('#live[data-state="live"]')`)
	step("paired; the board is live")
	if h, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`)); err != nil || h != "" {
		t.Errorf("location.hash after pairing: %q %v", h, err)
	}
	hist, err := chromedp.Run(ctx, chromedp.NavigationEntries())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hist.Entries {
		if strings.Contains(e.URL, secret) || strings.Contains(e.URL, "#s=") {
			t.Errorf("the pairing secret is in the phone's history: %s", e.URL)
		}
	}
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{origin + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var device *network.Cookie
	for _, c := range cookies.Cookies {
		if c.Name == "__Host-ensemble_device" {
			device = c
		}
	}
	if device == nil || !device.HTTPOnly || !device.Secure || device.Path != "/" || device.SameSite != network.CookieSameSiteStrict || len(device.Value) < 32 {
		t.Fatalf("device cookie: %+v (all: %d)", device, len(cookies.Cookies))
	}
	if jsCookies, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie`)); strings.Contains(jsCookies, device.Value) {
		t.Error("the page's script can read the device cookie")
	}

	// The board over the relay, and a task made on the computer arriving live.
	waitFor(t, ctx, "the task made before pairing", `document.body.innerText.includes(`+jsString(boardMarker)+`)`)
	if err := local.do(ctx0, "POST", "/api/tasks", map[string]any{"title": "Made while watching " + liveMarker}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the task made after the page loaded", `document.body.innerText.includes(`+jsString(liveMarker)+`)`)
	step("board loaded with the earlier task; the later one arrived live")
	press(t, ctx, `[data-jump="todo"]`)
	waitFor(t, ctx, "the To do column in view", `Math.abs(document.querySelector('[data-status="todo"]').getBoundingClientRect().left) < 40`)
	screenshot(t, ctx, "relay-phone-board-390.png", 390)

	// A Needs me question, answered on the phone.
	answered := make(chan needs.Answer, 1)
	go func() {
		a, err := rt.needs.Ask(context.Background(), needs.Decision{Kind: needs.Question, Source: needs.Source{Title: "Offline relay test"},
			Question: "Ship the release? (" + needMarker + ")", Options: []string{"Ship it", "Hold"}})
		if err == nil {
			answered <- a
		}
	}()
	waitFor(t, ctx, "the Needs me badge at 1", `document.getElementById('needs-count')?.textContent === '1'`)
	press(t, ctx, `#needs-button`)
	waitShown(t, ctx, `[data-need-id] [data-option="0"]`)
	waitFor(t, ctx, "the question", `document.querySelector('[data-need-id]').textContent.includes(`+jsString(needMarker)+`)`)
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-need-id]').dataset.needId`))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "no animation running", `document.getAnimations().length === 0`)
	screenshot(t, ctx, "relay-phone-needs-390.png", 390)
	press(t, ctx, `[data-need-id] [data-option="0"]`)
	select {
	case a := <-answered:
		if a.Option != 0 {
			t.Fatalf("answer: %+v", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the phone's answer did not reach the asker")
	}
	var d needs.Decision
	if err := local.do(ctx0, "GET", "/api/needs/"+id, nil, &d); err != nil {
		t.Fatal(err)
	}
	if d.Status != needs.Answered || d.Answer == nil || d.Answer.Option != 0 || d.AnsweredBy != needs.ByPhone {
		t.Fatalf("the runtime's record of the answer: %+v", d)
	}
	waitFor(t, ctx, "the Needs me badge at 0", `document.getElementById('needs-count')?.textContent === '0'`)
	step("the phone answered %q; the runtime has it (%s, by %s)", d.Options[0], d.Status, d.AnsweredBy)

	// Blindness: the relay's traffic holds the server name, but no marker, cookie or secret, and
	// what it forwards for the phone is TLS records and nothing else.
	cancel()
	w.closeChromium()
	conns := tap.conns()
	var total int
	var all [][]byte
	phoneConns := 0
	for _, c := range conns {
		in, out := c.bytes()
		total += len(in) + len(out)
		all = append(all, in, out)
		if bytes.Contains(in[:min(len(in), 4096)], []byte(host)) { // the phone's (or Pebble's) ClientHello
			phoneConns++
			for way, b := range map[string][]byte{"phone→relay": in, "relay→phone": out} {
				if err := onlyTLSRecords(b); err != nil {
					t.Errorf("a phone connection's %s bytes are not TLS records: %v", way, err)
				}
			}
		}
	}
	seen := bytes.Join(all, nil)
	if phoneConns == 0 || total < 50_000 || !bytes.Contains(seen, []byte(host)) {
		t.Fatalf("the tap saw %d connections, %d for the phone address, %d bytes; is it tapping the relay?", len(conns), phoneConns, total)
	}
	for what, m := range map[string]string{"the board's task": boardMarker, "the live task": liveMarker, "the question": needMarker,
		"the device cookie": device.Value, "the pairing secret": secret, "a path": "/api/needs", "the question's option": "Ship it"} {
		if bytes.Contains(seen, []byte(m)) {
			t.Errorf("the relay's traffic holds %s (%q)", what, m)
		}
	}
	step("tap: %d connections (%d to the phone address), %d bytes, no marker, cookie or secret", len(conns), phoneConns, total)
}

// relayWorld is what the relay's end-to-end tests share: a lab of namespaces, the relay on :443 of
// its own (behind a tap that keeps every byte), Pebble and its DNS (every name → the relay), and
// the phone's Chromium once asked for.
type relayWorld struct {
	lab        *netLab
	dir        string
	ca         *x509.Certificate
	caKey      *ecdsa.PrivateKey
	pool       *x509.CertPool // the test's CA: the relay's name and Pebble's HTTPS, what runtimes trust
	relay      *relay.Server
	tap        *tapListener
	phoneRoots *x509.CertPool // Pebble's roots: what phones trust
	acme       string         // Pebble's directory, at the relay's address on the runtime's link
	pebbleSPKI string         // Pebble's root and intermediate keys, as Chromium is told to trust them
	chromePath string
	began      time.Time

	closeChromium func()
}

func newRelayWorld(t *testing.T, chromium string) *relayWorld {
	t.Helper()
	pebble, err := exec.LookPath("pebble")
	if err != nil {
		enginetest.CannotRun(t, "pebble is not installed (apt-get install pebble)")
	}
	challtest, err := exec.LookPath("pebble-challtestsrv")
	if err != nil {
		enginetest.CannotRun(t, "pebble-challtestsrv is not installed (apt-get install pebble)")
	}
	w := &relayWorld{lab: newNetLab(t), dir: t.TempDir(), chromePath: chromium, began: time.Now(), closeChromium: func() {}}
	lab, dir := w.lab, w.dir
	w.step("namespaces %s, %s, %s, %s", lab.relay, lab.runtime, lab.phone, lab.attacker)

	// A CA of the test's own for the relay's name and Pebble's HTTPS: what the runtime trusts.
	w.ca, w.caKey = newNetnsCA(t)
	w.pool = x509.NewCertPool()
	w.pool.AddCert(w.ca)

	// The relay, on :443 of its namespace, behind a tap that keeps every byte of every connection.
	var ln net.Listener
	if err := lab.do(lab.relay, func() (err error) { ln, err = net.Listen("tcp", "0.0.0.0:443"); return err }); err != nil {
		t.Fatal(err)
	}
	w.tap = &tapListener{Listener: ln}
	w.relay = relay.NewServer(relay.ServerConfig{Domain: "relay.test", TLS: testCert(t, w.ca, w.caKey, "relay.test"),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	go w.relay.Serve(w.tap)
	t.Cleanup(func() { w.relay.Close(); ln.Close() })

	// Pebble and its DNS (every name → the relay), in the relay's namespace: a runtime reaches the
	// ACME API at the relay's address, Pebble's check reaches <id>.relay.test:443.
	pebbleCert(t, w.ca, w.caKey, dir)
	lab.start(t, lab.relay, dir, challtest, "-defaultIPv4", relayForRuntime, "-defaultIPv6", "", "-dns01", "127.0.0.1:8053",
		"-http01", "", "-https01", "", "-tlsalpn01", "", "-management", "127.0.0.1:8055")
	cfgFile := filepath.Join(dir, "pebble.json")
	os.WriteFile(cfgFile, []byte(fmt.Sprintf(`{"pebble":{"listenAddress":"0.0.0.0:14000","managementListenAddress":"0.0.0.0:15000",
		"certificate":%q,"privateKey":%q,"httpPort":5002,"tlsPort":443,"ocspResponderURL":"","externalAccountBindingRequired":false}}`,
		filepath.Join(dir, "pebble.pem"), filepath.Join(dir, "pebble-key.pem"))), 0o600)
	lab.start(t, lab.relay, dir, pebble, "-config", cfgFile, "-dnsserver", "127.0.0.1:8053")
	mgmt := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: lab.dialer(lab.relay),
		TLSClientConfig: &tls.Config{RootCAs: w.pool}}}
	root := waitGet(t, mgmt, "https://"+relayForRuntime+":15000/roots/0", dir)
	intermediate := waitGet(t, mgmt, "https://"+relayForRuntime+":15000/intermediates/0", dir)
	w.phoneRoots = x509.NewCertPool()
	if !w.phoneRoots.AppendCertsFromPEM(root) {
		t.Fatalf("pebble's root: %q", root)
	}
	w.pebbleSPKI = spkiHash(t, root) + "," + spkiHash(t, intermediate)
	w.acme = "https://" + relayForRuntime + ":14000/dir"
	w.step("relay on :443, Pebble ready")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "pebble.log"))
			t.Logf("pebble.log:\n%s", b)
		}
	})
	return w
}

func (w *relayWorld) step(format string, args ...any) {
	w.lab.t.Helper()
	w.lab.t.Logf("%6s  %s", time.Since(w.began).Round(10*time.Millisecond), fmt.Sprintf(format, args...))
}

// startRuntime starts a runtime with its sockets in ns: its loopback API there, the tunnel and ACME
// dialed from there, every relay.test name at relayAddr. Its data folder is dir/<name>; mod may
// change its configuration.
func (w *relayWorld) startRuntime(t *testing.T, ns, relayAddr, name string, mod func(*runtimeConfig)) *Runtime {
	t.Helper()
	dial := w.lab.dialer(ns)
	logFile, _ := os.Create(filepath.Join(w.dir, name+".log"))
	cfg := runtimeConfig{DataDir: filepath.Join(w.dir, name), Addr: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(logFile, nil)), Drivers: map[string]engines.Driver{},
		Notify: func(context.Context, string, string) {},
		Relay: &relayConfig{Relay: "relay.test", RootCAs: w.pool, ACMEDirectory: "https://" + relayAddr + ":14000/dir",
			Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if h, port, _ := net.SplitHostPort(addr); h == "relay.test" || strings.HasSuffix(h, ".relay.test") {
					addr = net.JoinHostPort(relayAddr, port)
				}
				return dial(ctx, network, addr)
			}}}
	if mod != nil {
		mod(&cfg)
	}
	var rt *Runtime
	err := w.lab.do(ns, func() (err error) {
		rt, err = startRuntime(context.Background(), cfg)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("%s.log:\n%s", name, b)
		}
	})
	return rt
}

// local is the runtime's local API as the command line and the desktop window use it (launch
// token), reached inside the runtime's namespace.
func (w *relayWorld) local(t *testing.T, rt *Runtime) *client {
	return &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)},
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: w.lab.dialer(w.lab.runtime)}}}
}

// waitCert waits until host's certificate comes from Pebble through the relay, as the phone checks
// it, and returns it.
func (w *relayWorld) waitCert(t *testing.T, host string) *x509.Certificate {
	t.Helper()
	dial := w.lab.dialer(w.lab.phone)
	var err error
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var conn net.Conn
		if conn, err = dial(context.Background(), "tcp", relayForPhone+":443"); err == nil {
			tc := tls.Client(conn, &tls.Config{ServerName: host, RootCAs: w.phoneRoots})
			tc.SetDeadline(time.Now().Add(5 * time.Second))
			err = tc.Handshake()
			conn.Close()
			if err == nil {
				return tc.ConnectionState().PeerCertificates[0]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no certificate from Pebble for %s through the relay: %v", host, err)
		}
	}
}

// phoneClient is a phone that is not a browser, in ns, every name at relayAddr, trusting Pebble:
// HTTP/2 when h2, else HTTP/1.1 only, with a connection at a time.
func (w *relayWorld) phoneClient(ns, relayAddr string, h2 bool) *http.Client {
	dial := w.lab.dialer(ns)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: w.phoneRoots}, Protocols: new(http.Protocols),
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dial(ctx, network, relayAddr+":443")
		}}
	tr.Protocols.SetHTTP1(true)
	tr.Protocols.SetHTTP2(h2)
	if !h2 {
		tr.MaxConnsPerHost = 1
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// chromium starts the phone: Chromium in the phone's namespace, every name resolved to the relay,
// trusting Pebble's CA by the public keys of its root and intermediate (Chromium honours the SPKI
// list only with a user data dir, which chromedp gives it). It returns the tab's context.
func (w *relayWorld) chromium(t *testing.T) context.Context {
	t.Helper()
	wrapper := filepath.Join(w.dir, "chromium-in-phone-ns")
	os.WriteFile(wrapper, []byte("#!/bin/sh\nexec ip netns exec "+w.lab.phone+" "+w.chromePath+" \"$@\"\n"), 0o755)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(wrapper),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("host-resolver-rules", "MAP * "+relayForPhone),
		chromedp.Flag("ignore-certificate-errors-spki-list", w.pebbleSPKI),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(390, 844),
	)
	bctx, cancelTab := chromedp.NewContext(actx)
	w.closeChromium = func() { cancelTab(); cancelAlloc() }
	t.Cleanup(w.closeChromium)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	return bctx
}

// The namespaces' addresses: the relay has one on each link.
const (
	relayForRuntime  = "10.201.1.1"
	runtimeAddr      = "10.201.1.2"
	relayForPhone    = "10.201.2.1"
	phoneAddr        = "10.201.2.2"
	relayForAttacker = "10.201.3.1"
	attackerAddr     = "10.201.3.2"
)

// netLab is four network namespaces, made for one test and deleted after it: the relay's, joined
// by a veth link to each of the runtime's, the phone's and an attacker's.
type netLab struct {
	t                               *testing.T
	sfx                             string
	relay, runtime, phone, attacker string
	direct                          []string // links made by linkDirect
}

func newNetLab(t *testing.T) *netLab {
	t.Helper()
	if os.Geteuid() != 0 {
		enginetest.CannotRun(t, "network namespaces need root (ip netns add); run the tests as root, e.g. in the project's container")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		enginetest.CannotRun(t, "ip (iproute2) is not installed; it makes the network namespaces")
	}
	sfx := randomHex(3) // interface names have at most 15 characters
	l := &netLab{t: t, sfx: sfx, relay: "ens-" + sfx + "-relay", runtime: "ens-" + sfx + "-runtime", phone: "ens-" + sfx + "-phone",
		attacker: "ens-" + sfx + "-attacker"}
	for _, ns := range []string{l.relay, l.runtime, l.phone, l.attacker} {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			enginetest.CannotRun(t, fmt.Sprintf("ip netns add: %v: %s", err, out))
		}
		t.Cleanup(func() {
			if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
				t.Errorf("ip netns del %s: %v: %s", ns, err, out)
			}
		})
		ip(t, "-n", ns, "link", "set", "lo", "up")
	}
	link := func(peer, relayEnd, peerEnd, relayIP, peerIP string) {
		ip(t, "link", "add", relayEnd, "type", "veth", "peer", "name", peerEnd)
		ip(t, "link", "set", relayEnd, "netns", l.relay)
		ip(t, "link", "set", peerEnd, "netns", peer)
		ip(t, "-n", l.relay, "addr", "add", relayIP+"/24", "dev", relayEnd)
		ip(t, "-n", peer, "addr", "add", peerIP+"/24", "dev", peerEnd)
		ip(t, "-n", l.relay, "link", "set", relayEnd, "up")
		ip(t, "-n", peer, "link", "set", peerEnd, "up")
		// The relay is the peer's only neighbour and its gateway; it forwards nothing (below).
		ip(t, "-n", peer, "route", "add", "default", "via", relayIP)
	}
	link(l.runtime, "ens"+sfx+"r0", "ens"+sfx+"t0", relayForRuntime, runtimeAddr)
	link(l.phone, "ens"+sfx+"r1", "ens"+sfx+"p0", relayForPhone, phoneAddr)
	link(l.attacker, "ens"+sfx+"r2", "ens"+sfx+"a0", relayForAttacker, attackerAddr)
	if err := l.do(l.relay, func() error {
		return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("0\n"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	return l
}

// linkDirect joins namespaces a and b by a veth link of their own, aIP and bIP on a /24 (routes
// to that /24 only): the attacker sitting on the runtime's own network, say.
func (l *netLab) linkDirect(a, b, aIP, bIP string) {
	t := l.t
	ea, eb := "ens"+l.sfx+"d"+strconv.Itoa(len(l.direct)), "ens"+l.sfx+"e"+strconv.Itoa(len(l.direct))
	l.direct = append(l.direct, ea)
	ip(t, "link", "add", ea, "type", "veth", "peer", "name", eb)
	ip(t, "link", "set", ea, "netns", a)
	ip(t, "link", "set", eb, "netns", b)
	ip(t, "-n", a, "addr", "add", aIP+"/24", "dev", ea)
	ip(t, "-n", b, "addr", "add", bIP+"/24", "dev", eb)
	ip(t, "-n", a, "link", "set", ea, "up")
	ip(t, "-n", b, "link", "set", eb, "up")
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// do runs f on an OS thread moved into the namespace ns, so the sockets f makes live there (a
// listener's connections, a dialed connection). The thread is never handed back to the Go
// scheduler: it exits with the goroutine.
func (l *netLab) do(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // no unlock: the thread is in another namespace now
		fd, err := os.Open(filepath.Join("/run/netns", ns))
		if err != nil {
			errc <- err
			return
		}
		defer fd.Close()
		if err := unix.Setns(int(fd.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// dialer dials from inside ns.
func (l *netLab) dialer(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		err = l.do(ns, func() (err error) {
			c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}

// start runs a program inside ns with `ip netns exec`, its output in dir/<name>.log, until the
// test ends.
func (l *netLab) start(t *testing.T, ns, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, name}, args...)...)
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
	out, _ := os.Create(filepath.Join(dir, filepath.Base(name)+".log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); out.Close() })
}

// checkIsolated fails t unless the phone and the runtime each reach the relay but not each other,
// though each listens on its own address.
func (l *netLab) checkIsolated(t *testing.T) {
	t.Helper()
	for _, ns := range []string{l.runtime, l.phone, l.attacker} {
		var ln net.Listener
		if err := l.do(ns, func() (err error) { ln, err = net.Listen("tcp", "0.0.0.0:7000"); return err }); err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	reach := func(from, addr string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		c, err := l.dialer(from)(ctx, "tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, c := range []struct{ from, to string }{{l.phone, runtimeAddr}, {l.runtime, phoneAddr}, {l.attacker, runtimeAddr},
		{l.attacker, phoneAddr}, {l.phone, attackerAddr}, {l.runtime, attackerAddr}} {
		if err := reach(c.from, c.to+":7000"); err == nil {
			t.Fatalf("%s reaches %s directly", c.from, c.to)
		}
	}
	for _, c := range []struct{ from, to string }{{l.phone, relayForPhone}, {l.runtime, relayForRuntime}, {l.attacker, relayForAttacker}} {
		if err := reach(c.from, c.to+":443"); err != nil {
			t.Fatalf("%s does not reach the relay at %s: %v", c.from, c.to, err)
		}
	}
}

// tapListener keeps a copy of every byte read from and written to each connection it accepts.
type tapListener struct {
	net.Listener
	mu   sync.Mutex // guards the following fields
	taps []*tapConn
}

func (l *tapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &tapConn{Conn: c}
	l.mu.Lock()
	l.taps = append(l.taps, tc)
	l.mu.Unlock()
	return tc, nil
}

func (l *tapListener) conns() []*tapConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*tapConn(nil), l.taps...)
}

type tapConn struct {
	net.Conn
	mu      sync.Mutex // guards the following fields
	in, out bytes.Buffer
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.in.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

func (c *tapConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	c.out.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

// bytes returns copies of what was read (in) and written (out).
func (c *tapConn) bytes() (in, out []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.in.Bytes()), bytes.Clone(c.out.Bytes())
}

// onlyTLSRecords checks that b is a sequence of TLS records (a last one may be cut off).
func onlyTLSRecords(b []byte) error {
	for off := 0; len(b) >= 5; off++ {
		typ, ver, n := b[0], binary.BigEndian.Uint16(b[1:3]), int(binary.BigEndian.Uint16(b[3:5]))
		if typ < 20 || typ > 23 || ver>>8 != 3 || n > 1<<14+256 {
			return fmt.Errorf("record %d: type %d, version %#x, length %d", off, typ, ver, n)
		}
		if len(b) < 5+n {
			return nil
		}
		b = b[5+n:]
	}
	return nil
}

func newNetnsCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "relay test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	return ca, key
}

// pebbleCert writes Pebble's own HTTPS certificate and key, for the relay's address, to dir.
func pebbleCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, dir string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2),
		Subject: pkix.Name{CommonName: "pebble"}, IPAddresses: []net.IP{net.ParseIP(relayForRuntime), net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(filepath.Join(dir, "pebble.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, "pebble-key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}

// waitGet GETs url until it answers 200 (Pebble starting), and returns the body.
func waitGet(t *testing.T, hc *http.Client, url, dir string) []byte {
	t.Helper()
	var err error
	for deadline := time.Now().Add(15 * time.Second); ; {
		var resp *http.Response
		if resp, err = hc.Get(url); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return b
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "pebble.log"))
			t.Fatalf("GET %s: %v\npebble log:\n%s", url, err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// spkiHash is the base64 SHA-256 of the public key of the PEM certificate, as Chromium's
// --ignore-certificate-errors-spki-list takes it.
func spkiHash(t *testing.T, pemCert []byte) string {
	t.Helper()
	blk, _ := pem.Decode(pemCert)
	if blk == nil {
		t.Fatalf("no PEM certificate in %q", pemCert)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// waitAcrossNavigation polls a JavaScript condition until it holds, through the page's own
// navigations (which end a chromedp.Poll).
func waitAcrossNavigation(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var ok bool
		if ok, err = chromedp.Run(ctx, chromedp.Evaluate[bool](cond)); err == nil && ok {
			return
		}
	}
	page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText.slice(0, 3000)`))
	t.Fatalf("%s: %v\npage:\n%s", what, err, page)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
