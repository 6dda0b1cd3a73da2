package relay

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestReadFrameHeader(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		typ     byte
		n       uint32
		wantErr error
	}{
		{"empty payload", []byte{frameConn, 0, 0, 0, 0}, frameConn, 0, nil},
		{"max", []byte{frameNotice, 0, 0, 4, 0}, frameNotice, maxFrame, nil},
		{"too large", []byte{frameNotice, 0, 0, 4, 1}, 0, 0, ErrFrameTooLarge},
		{"huge", []byte{frameConn, 0xff, 0xff, 0xff, 0xff}, 0, 0, ErrFrameTooLarge},
		{"short", []byte{frameConn, 0, 0}, 0, 0, io.ErrUnexpectedEOF},
		{"nothing", nil, 0, 0, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, n, err := readFrameHeader(bytes.NewReader(tt.in))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if typ != tt.typ || n != tt.n {
				t.Fatalf("got (0x%02x, %d), want (0x%02x, %d)", typ, n, tt.typ, tt.n)
			}
		})
	}
}

func TestFrameRoundTripAndSkip(t *testing.T) {
	var b bytes.Buffer
	writeFrame(&b, 0x7f, []byte("from a newer relay")) // unknown: skipped
	writeFrame(&b, frameServerOK, []byte("id"))
	typ, p, err := readFrameOf(&b, frameServerOK, frameRefused)
	if err != nil || typ != frameServerOK || string(p) != "id" {
		t.Fatalf("got (0x%02x, %q, %v), want (ok, id, nil)", typ, p, err)
	}
	b.Reset()
	writeFrame(&b, frameConn, nil) // known but not wanted: an error
	if _, _, err := readFrameOf(&b, frameServerOK); err == nil {
		t.Fatal("an unexpected known frame was accepted")
	}
	if err := writeFrame(&b, frameConn, make([]byte, maxFrame+1)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("writeFrame of %d bytes: %v, want ErrFrameTooLarge", maxFrame+1, err)
	}
}

func FuzzReadFrame(f *testing.F) {
	var b bytes.Buffer
	writeFrame(&b, frameServerHello, make([]byte, 33))
	f.Add(b.Bytes())
	f.Add([]byte{frameConn, 0, 0, 0, 9, '1', '2', '7', '.', '0', '.', '0', '.', '1'})
	f.Add([]byte{frameNotice, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x7f, 0, 0, 0, 1, 0, frameServerOK, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		typ, p, err := readFrame(bytes.NewReader(in))
		if err != nil {
			return
		}
		if len(p) > maxFrame {
			t.Fatalf("payload of %d bytes", len(p))
		}
		var out bytes.Buffer
		if err := writeFrame(&out, typ, p); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), in[:frameHeaderLen+len(p)]) {
			t.Fatal("frame does not round-trip")
		}
		readFrameOf(bytes.NewReader(in), frameServerOK, frameRefused) // must not panic or loop
		verifyAuth(testDomain, make([]byte, nonceLen), make([]byte, bindingLen), p)
	})
}

func TestAuth(t *testing.T) {
	k := NewDeviceKey()
	other := NewDeviceKey()
	nonce := bytes.Repeat([]byte{7}, nonceLen)
	binding := bytes.Repeat([]byte{9}, bindingLen)
	good := k.signAuth(testDomain, nonce, binding, "")
	if id, _, err := verifyAuth(testDomain, nonce, binding, good); err != nil || id != k.ID() {
		t.Fatalf("good login: id %q, err %v", id, err)
	}
	forged := append(append([]byte{}, k.Public()...), other.signAuth(testDomain, nonce, binding, "")[32:]...)
	tests := []struct {
		name    string
		relay   string
		nonce   []byte
		binding []byte
		p       []byte
	}{
		{"another relay's name", "evil.test", nonce, binding, good},
		{"another nonce (replay)", testDomain, bytes.Repeat([]byte{8}, nonceLen), binding, good},
		{"another TLS connection (passed through a proxy)", testDomain, nonce, bytes.Repeat([]byte{1}, bindingLen), good},
		{"no binding", testDomain, nonce, nil, good},
		{"victim's key, own signature", testDomain, nonce, binding, forged},
		{"short", testDomain, nonce, binding, good[:90]},
		{"empty", testDomain, nonce, binding, nil},
		{"too long", testDomain, nonce, binding, append(append([]byte{}, good...), make([]byte, 65)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if id, _, err := verifyAuth(tt.relay, tt.nonce, tt.binding, tt.p); err == nil {
				t.Fatalf("accepted as %s", id)
			}
		})
	}
}

func TestID(t *testing.T) {
	k := NewDeviceKey()
	id := k.ID()
	if !ValidID(id) || len(id) != IDLen || strings.ToLower(id) != id {
		t.Fatalf("id %q is not 26 lower-case base32 characters", id)
	}
	for _, bad := range []string{"", "relay", strings.Repeat("a", 25), strings.Repeat("A", 26), strings.Repeat("1", 26)} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
	if s := k.String(); !strings.HasPrefix(s, "devicekey:") {
		t.Fatalf("String() = %q", s)
	}
}

// clientHello records the bytes a TLS client sends first.
func clientHello(t *testing.T, cfg *tls.Config) []byte {
	t.Helper()
	a, b := net.Pipe()
	go func() {
		tls.Client(a, cfg).Handshake()
	}()
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	var out []byte
	buf := make([]byte, 64<<10)
	// The hello is one flight: read until the client stops writing.
	for {
		b.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := b.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			break
		}
	}
	a.Close()
	b.Close()
	return out
}

func TestPeekServerName(t *testing.T) {
	name := "abcdefghijklmnopqrstuvwxyz." + testDomain
	tls12 := clientHello(t, &tls.Config{ServerName: name, MaxVersion: tls.VersionTLS12})
	tls13 := clientHello(t, &tls.Config{ServerName: name, MinVersion: tls.VersionTLS13})
	mlkem := clientHello(t, &tls.Config{ServerName: name, CurvePreferences: []tls.CurveID{tls.X25519MLKEM768, tls.X25519}})
	noSNI := clientHello(t, &tls.Config{InsecureSkipVerify: true})
	upper := clientHello(t, &tls.Config{ServerName: strings.ToUpper(name) + "."})
	tests := []struct {
		name    string
		r       io.Reader
		want    string
		wantErr bool
	}{
		{"TLS 1.2", bytes.NewReader(tls12), name, false},
		{"TLS 1.3", bytes.NewReader(tls13), name, false},
		{"ML-KEM sized", bytes.NewReader(mlkem), name, false},
		{"byte by byte", iotest.OneByteReader(bytes.NewReader(tls13)), name, false},
		{"upper case, trailing dot", bytes.NewReader(upper), name, false},
		{"no SNI", bytes.NewReader(noSNI), "", false},
		{"garbage", strings.NewReader("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "", true},
		{"truncated", bytes.NewReader(tls13[:40]), "", true},
		{"endless record", io.MultiReader(bytes.NewReader([]byte{0x16, 3, 1, 0x40, 0}), zeros{}), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pre, err := peekServerName(tt.r)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("name = %q, want %q", got, tt.want)
			}
			if !tt.wantErr && len(pre) == 0 {
				t.Fatal("no bytes kept to replay")
			}
		})
	}
	if len(mlkem) < 1200 {
		t.Errorf("ML-KEM hello is %d bytes; expected a large one", len(mlkem))
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
