package relay

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// testCA is a certificate authority made in the test, standing in for ACME where ACME is not the point.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ensemble test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue makes a TLS server config for host, signed by the CA.
func (ca *testCA) issue(t testing.TB, host string) *tls.Config {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host},
		DNSNames: []string{host}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos: []string{"h2", "http/1.1"}}
}

const testDomain = "relay.test"

// testRelay is a relay on a loopback port.
type testRelay struct {
	srv  *Server
	ln   net.Listener
	addr string
}

func startRelay(t testing.TB, ca *testCA, addr string, mod func(*ServerConfig)) *testRelay {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for range 50 { // a restarted relay may wait for its port
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Every test phone and runtime is on loopback, most from one address: the per-source limits
	// are as large as the whole relay's unless a test sets them.
	cfg := ServerConfig{Domain: testDomain, TLS: ca.issue(t, testDomain), AcceptPerIP: 100000, AcceptBurst: 100000,
		MaxConnsPerSource: 50000, MaxStreamsPerSource: 1000, MaxTunnelsPerSource: 10000,
		RetryAfter: 100 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	r := &testRelay{srv: NewServer(cfg), ln: ln, addr: ln.Addr().String()}
	go r.srv.Serve(ln)
	t.Cleanup(r.stop)
	return r
}

func (r *testRelay) stop() {
	r.srv.Close()
	r.ln.Close()
}

// dialTo makes an http.Client that reaches every name at addr and trusts the CA: a phone, or the
// runtime dialing the relay.
func dialTo(ca *testCA, addr func() string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr())
		},
		TLSClientConfig:     &tls.Config{RootCAs: ca.pool},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 100,
	}
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// testRuntime is a runtime's tunnel serving handler behind TLS for its relay name.
type testRuntime struct {
	c    *Client
	srv  *http.Server
	host string
	err  chan error
}

func startRuntime(t testing.TB, ca *testCA, relayAddr func() string, key DeviceKey, h http.Handler) *testRuntime {
	t.Helper()
	return startRuntimeWith(t, ca, relayAddr, key, h, nil)
}

// startRuntimeWith is startRuntime with the client's configuration changed by mod.
func startRuntimeWith(t testing.TB, ca *testCA, relayAddr func() string, key DeviceKey, h http.Handler, mod func(*ClientConfig)) *testRuntime {
	t.Helper()
	cfg := ClientConfig{Relay: testDomain, Key: key, HTTPClient: dialTo(ca, relayAddr),
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		MaxConnsPerSource: 100000} // test phones share one loopback address

	if mod != nil {
		mod(&cfg)
	}
	c := NewClient(cfg)
	rt := &testRuntime{c: c, host: c.Host(), err: make(chan error, 1),
		srv: &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}}
	go rt.srv.Serve(tls.NewListener(c, ca.issue(t, c.Host())))
	go func() { rt.err <- c.Run(context.Background()) }()
	t.Cleanup(func() { c.Close(); rt.srv.Close() })
	waitUp(t, c)
	return rt
}

func waitUp(t testing.TB, c *Client) {
	t.Helper()
	select {
	case <-c.Connected():
	case <-time.After(10 * time.Second):
		t.Fatal("tunnel did not come up")
	}
}

// tap is a TCP proxy that keeps every byte it carries, both ways.
type tap struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	buf    []byte
}

func startTap(t testing.TB, target string) *tap {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tap{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				u, err := net.Dial("tcp", target)
				if err != nil {
					c.Close()
					return
				}
				cp := func(dst, src net.Conn) {
					b := make([]byte, 32<<10)
					for {
						n, err := src.Read(b)
						if n > 0 {
							tp.mu.Lock()
							tp.buf = append(tp.buf, b[:n]...)
							tp.mu.Unlock()
							if _, err := dst.Write(b[:n]); err != nil {
								break
							}
						}
						if err != nil {
							break
						}
					}
					c.Close()
					u.Close()
				}
				go cp(u, c)
				cp(c, u)
			}()
		}
	}()
	return tp
}

func (tp *tap) bytes() []byte {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]byte{}, tp.buf...)
}

func isClosed(err error) bool { return errors.Is(err, net.ErrClosed) }
