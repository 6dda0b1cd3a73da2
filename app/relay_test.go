package app

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/relay"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// testCert issues a certificate for host from a CA made here (ACME is not the point of this test).
func testCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, host string) *tls.Config {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host},
		DNSNames: []string{host}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"h2", "http/1.1"}}
}

// A phone pairs through the relay with the link `ensemble pair` prints, then uses the runtime as
// the person: reads the board, follows live events, makes a task and answers a Needs me card.
func TestPhoneThroughRelay(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	pool := x509.NewCertPool()
	pool.AddCert(ca)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs := relay.NewServer(relay.ServerConfig{Domain: "relay.test", TLS: testCert(t, ca, caKey, "relay.test")})
	go rs.Serve(ln)
	t.Cleanup(func() { rs.Close(); ln.Close() })
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, ln.Addr().String())
	}

	data := t.TempDir()
	cfg := &relayConfig{Relay: "relay.test", RootCAs: pool, Dial: dial}
	seal, err := secrets.OpenLocalSealer(data)
	if err != nil {
		t.Fatal(err)
	}
	_, host, err := relayHost(data, cfg, seal)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLS = testCert(t, ca, caKey, host)
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: data, Addr: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Relay: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	if rt.PhoneURL() != "https://"+host+"/" {
		t.Fatalf("PhoneURL %q", rt.PhoneURL())
	}
	select {
	case <-rt.phones.client.Connected():
	case <-time.After(10 * time.Second):
		t.Fatal("tunnel did not come up")
	}

	code, out := ensemble(t, "pair", "--data", data)
	if code != 0 {
		t.Fatalf("ensemble pair: %d %s", code, out)
	}
	link := regexp.MustCompile(`https://\S+/pair#s=[A-Za-z0-9_-]+`).FindString(out)
	if !strings.HasPrefix(link, "https://"+host+"/pair#s=") || !strings.Contains(out, "▀") {
		t.Fatalf("ensemble pair printed no QR code and link for %s:\n%s", host, out)
	}
	secret := link[strings.Index(link, "#s=")+3:]

	jar, _ := cookiejar.New(nil)
	phone := &http.Client{Jar: jar, Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	origin := "https://" + host
	do := func(method, path, body string, headers ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, origin+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := phone.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return resp
	}
	if resp := do("GET", "/api/tasks", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("before pairing: %d", resp.StatusCode)
	}
	page := do("GET", "/pair", "")
	if page.StatusCode != 200 || page.Header.Get("Strict-Transport-Security") == "" {
		t.Fatalf("pair page: %d, HSTS %q", page.StatusCode, page.Header.Get("Strict-Transport-Security"))
	}
	if resp := do("POST", "/api/pair", `{"secret":"`+secret+`"}`, "Origin", origin); resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("pair: %d %s", resp.StatusCode, b)
	}
	if resp := do("POST", "/api/pair", `{"secret":"`+secret+`"}`, "Origin", origin); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("pairing twice with one link: %d", resp.StatusCode)
	}

	// Live events, as the board follows them.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", origin+"/api/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	stream, err := phone.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", err, stream)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	if resp := do("POST", "/api/tasks", `{"title":"made on the phone"}`, "Origin", origin); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create task: %d", resp.StatusCode)
	}
	waitLine(t, lines, "made on the phone")
	resp := do("GET", "/api/tasks", "")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "made on the phone") {
		t.Fatalf("board: %d %s", resp.StatusCode, b)
	}

	// A Needs me card, answered from the phone.
	answered := make(chan needs.Answer, 1)
	go func() {
		a, err := rt.needs.Ask(context.Background(), needs.Decision{Kind: needs.Question, Source: needs.Source{Title: "test"},
			Question: "Ship it?", Options: []string{"Yes", "No"}})
		if err == nil {
			answered <- a
		}
	}()
	var id string
	for deadline := time.Now().Add(5 * time.Second); id == "" && time.Now().Before(deadline); {
		var list struct {
			Needs []needs.Decision `json:"needs"`
		}
		resp := do("GET", "/api/needs", "")
		json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if len(list.Needs) > 0 {
			id = list.Needs[0].ID
		}
		time.Sleep(20 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("the phone never saw the card")
	}
	if resp := do("POST", "/api/needs/"+id+"/answer", `{"option":0}`, "Origin", origin); resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("answer: %d %s", resp.StatusCode, b)
	}
	select {
	case <-answered:
	case <-time.After(5 * time.Second):
		t.Fatal("the answer did not reach the asker")
	}

	// Signed out from the computer: the phone's next request is refused.
	code, out = ensemble(t, "pair", "list", "--data", data)
	m := regexp.MustCompile(`phone_\S+`).FindString(out)
	if code != 0 || m == "" {
		t.Fatalf("pair list: %d %s", code, out)
	}
	if code, out := ensemble(t, "pair", "revoke", m, "--data", data); code != 0 {
		t.Fatalf("pair revoke: %d %s", code, out)
	}
	if resp := do("GET", "/api/tasks", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after revoke: %d", resp.StatusCode)
	}
}

func waitLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no event with %q", want)
		}
	}
}

func TestWriteQR(t *testing.T) {
	var b strings.Builder
	if err := writeQR(&b, "https://abcdefghijklmnopqrstuvwxyz.relay.test/pair#s=AAAAAAAAAAAAAAAAAAAAAA", false); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(rows) < 15 || len([]rune(rows[0])) != len([]rune(rows[len(rows)-1])) {
		t.Fatalf("QR code of %d rows:\n%s", len(rows), b.String())
	}
}
