package takeover

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

// tinyJPEG is a real 4×2 JPEG of one colour.
func tinyJPEG(t *testing.T, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 2))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 50}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestJPEGFrame(t *testing.T) {
	pic := tinyJPEG(t, color.RGBA{200, 30, 30, 255})
	h := JPEGHeader{Seq: 3, Width: 4, Height: 2, URL: "https://shop.example/cart", Title: "Cart — ünïcode", Popup: true, Mode: "control"}
	b := EncodeJPEGFrame(h, pic)
	got, img, err := DecodeJPEGFrame(b)
	h.T, h.Kind = "frame", "jpeg"
	if err != nil || got != h || !bytes.Equal(img, pic) {
		t.Fatalf("decoded %+v (%d bytes) %v", got, len(img), err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(img)); err != nil {
		t.Fatalf("the picture does not decode: %v", err)
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"JSON", []byte(`{"t":"end","reason":"stopped"}`)},
		{"a header longer than the message", append([]byte{JPEGFrameTag, 0, 0, 1, 0}, `{}`...)},
		{"a header of another kind", EncodeJPEGFrame(JPEGHeader{}, nil)[:5]},
	} {
		if _, _, err := DecodeJPEGFrame(c.b); !errors.Is(err, ErrNotJPEGFrame) {
			t.Errorf("%s: %v, want ErrNotJPEGFrame", c.name, err)
		}
	}
}

// jpegVector is one browser frame sealed by the runtime, which frontend/src/lib/browserframe.test.ts
// opens and reads: the proof that the page reads this runtime's pictures.
type jpegVector struct {
	Secret     string     `json:"secret"` // base64url
	TakeoverID string     `json:"takeoverId"`
	Header     JPEGHeader `json:"header"`
	JPEG       string     `json:"jpeg"`  // base64url
	Plain      string     `json:"plain"` // base64url
	Msg        string     `json:"msg"`   // base64url, sealed as message 1
}

func TestJPEGVector(t *testing.T) {
	s := make([]byte, SecretSize)
	for i := range s {
		s[i] = byte(i * 5)
	}
	id := "tk_00000000jpegframe"
	pic := tinyJPEG(t, color.RGBA{20, 120, 220, 255})
	h := JPEGHeader{T: "frame", Kind: "jpeg", Seq: 1, Width: 4, Height: 2, URL: "https://example.com/sign-in", Title: "Sign in ✓", Popup: true, Mode: "watch"}
	plain := EncodeJPEGFrame(h, pic)
	rt, _ := RuntimeChannel(s, id)
	enc := base64.RawURLEncoding.EncodeToString
	v := jpegVector{Secret: enc(s), TakeoverID: id, Header: h, JPEG: enc(pic), Plain: enc(plain), Msg: enc(rt.Seal(plain))}
	got, _ := json.MarshalIndent(v, "", "  ")
	got = append(got, '\n')
	path := filepath.Join("testdata", "jpeg_vector.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run JPEGVector -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the browser frame's vector changed; the page would no longer read this runtime (go test -update rewrites it, then check browserframe.test.ts)")
	}
}
