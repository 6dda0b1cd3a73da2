package takeover

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/e2e_vectors.json")

func secret(b byte) []byte { return bytes.Repeat([]byte{b}, SecretSize) }

func TestChannel(t *testing.T) {
	page, err := PageChannel(secret(7), "tk_one")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := RuntimeChannel(secret(7), "tk_one")
	if err != nil {
		t.Fatal(err)
	}
	m1, m2, m3 := page.Seal([]byte("one")), page.Seal([]byte("two")), page.Seal([]byte("three"))
	back := rt.Seal([]byte("frame"))
	other, _ := PageChannel(secret(7), "tk_two")
	elsewhere := other.Seal([]byte("one"))
	changed := bytes.Clone(m3)
	changed[len(changed)-1] ^= 1

	for _, c := range []struct {
		name string
		msg  []byte
		want string
		err  error
	}{
		{"first", m1, "one", nil},
		{"again", m1, "", ErrSequence},
		{"empty", nil, "", ErrOpen},
		{"changed", changed, "", ErrOpen},
		{"another takeover", elsewhere, "", ErrSequence}, // its number 1 is taken already
		{"its own message reflected", back, "", ErrSequence},
		{"third before second", m3, "three", nil},
		{"second late", m2, "", ErrSequence},
	} {
		got, err := rt.Open(c.msg)
		if !errors.Is(err, c.err) || string(got) != c.want {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, got, err, c.want, c.err)
		}
	}

	// A message made for another takeover, or for the other direction, does not open even with a
	// number not taken yet.
	fresh, _ := RuntimeChannel(secret(7), "tk_one")
	for _, c := range []struct {
		name string
		msg  []byte
	}{
		{"another takeover", elsewhere},
		{"the other direction", back},
		{"another secret", func() []byte { p, _ := PageChannel(secret(8), "tk_one"); return p.Seal([]byte("x")) }()},
	} {
		if _, err := fresh.Open(c.msg); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: %v, want ErrOpen", c.name, err)
		}
	}
	if got, err := page.Open(back); err != nil || string(got) != "frame" {
		t.Errorf("the page opens the runtime's frame: %q %v", got, err)
	}
	if _, err := PageChannel(secret(1)[:16], "tk"); err == nil {
		t.Error("a 16-byte secret was taken")
	}
}

// vectors are fixed messages both ways, which frontend/src/lib/e2e.test.ts opens and makes again:
// the proof that the page and the runtime speak the same encryption.
type vectors struct {
	Secret        string   `json:"secret"` // base64url
	TakeoverID    string   `json:"takeoverId"`
	PageToRuntime []vector `json:"pageToRuntime"`
	RuntimeToPage []vector `json:"runtimeToPage"`
}

type vector struct {
	Seq   uint64 `json:"seq"`
	Plain string `json:"plain"`
	Msg   string `json:"msg"` // base64url
}

func TestVectors(t *testing.T) {
	s := make([]byte, SecretSize)
	for i := range s {
		s[i] = byte(i * 7)
	}
	v := vectors{Secret: base64.RawURLEncoding.EncodeToString(s), TakeoverID: "tk_0123456789abcdef"}
	page, _ := PageChannel(s, v.TakeoverID)
	rt, _ := RuntimeChannel(s, v.TakeoverID)
	for i, p := range []string{`{"events":[{"t":"tty","text":"ls -la\r"}]}`, `{"events":[{"t":"tty-key","key":"Ctrl+C"}]}`, `{"events":[{"t":"ping"}]}`} {
		v.PageToRuntime = append(v.PageToRuntime, vector{Seq: uint64(i + 1), Plain: p, Msg: base64.RawURLEncoding.EncodeToString(page.Seal([]byte(p)))})
	}
	for i, p := range []string{`{"t":"frame","kind":"terminal","cols":2,"rows":1,"cursor":{"x":1,"y":0},"title":"bash — ünïcode ✓","payload":{"rows":[[{"t":"$ ","fg":"#00ff00"}]]}}`, `{"t":"end","reason":"stopped"}`} {
		v.RuntimeToPage = append(v.RuntimeToPage, vector{Seq: uint64(i + 1), Plain: p, Msg: base64.RawURLEncoding.EncodeToString(rt.Seal([]byte(p)))})
	}
	got, _ := json.MarshalIndent(v, "", "  ")
	got = append(got, '\n')
	path := filepath.Join("testdata", "e2e_vectors.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run Vectors -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the vectors changed; the page would no longer read this runtime (go test -update rewrites them, then check e2e.test.ts)")
	}
	// And they open on the other side.
	rt2, _ := RuntimeChannel(s, v.TakeoverID)
	for _, m := range v.PageToRuntime {
		b, _ := base64.RawURLEncoding.DecodeString(m.Msg)
		if p, err := rt2.Open(b); err != nil || string(p) != m.Plain {
			t.Fatalf("open %d: %q %v", m.Seq, p, err)
		}
	}
}
