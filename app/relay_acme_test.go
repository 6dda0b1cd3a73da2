package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/relay"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// The runtime gets the certificate for its phone address from an ACME server (Pebble, Debian's
// package), whose tls-alpn-01 check reaches the runtime through the relay's passthrough: the relay
// has no ACME code for it and never holds the runtime's key.
func TestPhoneCertificateByACMEThroughRelay(t *testing.T) {
	pebble, err := exec.LookPath("pebble")
	if err != nil {
		enginetest.CannotRun(t, "pebble is not installed (apt-get install pebble)")
	}
	challtest, err := exec.LookPath("pebble-challtestsrv")
	if err != nil {
		enginetest.CannotRun(t, "pebble-challtestsrv is not installed (apt-get install pebble)")
	}
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	pool := x509.NewCertPool()
	pool.AddCert(ca)

	// Pebble's own HTTPS certificate, for 127.0.0.1.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2),
		Subject: pkix.Name{CommonName: "pebble"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, &key.PublicKey, caKey)
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(filepath.Join(dir, "pebble.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, "pebble-key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)

	// The relay, on the port Pebble validates tls-alpn-01 at.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs := relay.NewServer(relay.ServerConfig{Domain: "relay.test", TLS: testCert(t, ca, caKey, "relay.test")})
	go rs.Serve(ln)
	t.Cleanup(func() { rs.Close(); ln.Close() })
	_, relayPort, _ := net.SplitHostPort(ln.Addr().String())

	dns, acmeAddr, mgmt := freeAddr(t), freeAddr(t), freeAddr(t)
	start := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
		out, _ := os.Create(filepath.Join(dir, filepath.Base(name)+".log"))
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	start(challtest, "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "", "-dns01", dns, "-http01", "", "-https01", "",
		"-tlsalpn01", "", "-management", freeAddr(t))
	cfgFile := filepath.Join(dir, "pebble.json")
	os.WriteFile(cfgFile, []byte(fmt.Sprintf(`{"pebble":{"listenAddress":%q,"managementListenAddress":%q,
		"certificate":%q,"privateKey":%q,"httpPort":5002,"tlsPort":%s,"ocspResponderURL":"","externalAccountBindingRequired":false}}`,
		acmeAddr, mgmt, filepath.Join(dir, "pebble.pem"), filepath.Join(dir, "pebble-key.pem"), relayPort)), 0o600)
	start(pebble, "-config", cfgFile, "-dnsserver", dns)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	var roots []byte
	for deadline := time.Now().Add(15 * time.Second); ; {
		resp, err := hc.Get("https://" + mgmt + "/roots/0")
		if err == nil {
			roots, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "pebble.log"))
			t.Fatalf("pebble did not start: %v\n%s", err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}

	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h, _, _ := net.SplitHostPort(addr); h == "relay.test" || strings.HasSuffix(h, ".relay.test") {
			addr = ln.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	data := t.TempDir()
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: data, Addr: "127.0.0.1:0",
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Relay: &relayConfig{Relay: "relay.test", RootCAs: pool, Dial: dial, ACMEDirectory: "https://" + acmeAddr + "/dir"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })

	phonePool := x509.NewCertPool()
	if !phonePool.AppendCertsFromPEM(roots) {
		t.Fatalf("pebble's root: %q", roots)
	}
	phone := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: dial,
		TLSClientConfig: &tls.Config{RootCAs: phonePool}, ForceAttemptHTTP2: true}}
	began := time.Now()
	var resp *http.Response
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err = phone.Get(rt.PhoneURL() + "api/health")
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "pebble.log"))
		t.Fatalf("GET through the relay with an ACME certificate: %v\npebble log:\n%s", err, b)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil || resp.TLS.PeerCertificates[0].DNSNames[0] != rt.phones.Host() {
		t.Fatalf("got %d, certificate %v", resp.StatusCode, resp.TLS.PeerCertificates[0].DNSNames)
	}
	t.Logf("first GET including issuance through the relay: %v, %s", time.Since(began).Round(time.Millisecond), resp.Proto)
	// The certificate is kept in the data folder, so a restart orders none. autocert writes it
	// after the handshake that ordered it; a retried GET can finish its own handshake first.
	cached := filepath.Join(data, "relay", "certs", rt.phones.Host())
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := os.Stat(cached)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("certificate not cached: %v", err)
		}
	}
}
