//go:build !windows

package terminal

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWritePNG draws a real screen with coloured text and reads the picture back: the screen's
// size in cells, and not blank. ENSEMBLE_TERMINAL_PNG=path keeps it to look at.
func TestWritePNG(t *testing.T) {
	m := newTestManager(t, 2)
	s, err := m.Start(StartOptions{Cols: 120, Rows: 32, Command: `printf '\033[1;32mgreen bold\033[0m plain \033[41mred back\033[0m\n'; echo "Hello from the terminal"; sleep 5`})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the text on the screen", func() bool { return strings.Contains(s.Text(), "Hello from the terminal") })
	var buf bytes.Buffer
	w, h, err := s.WritePNG(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if w != 120*7 || h != 32*13 {
		t.Fatalf("size %d×%d, want %d×%d", w, h, 120*7, 32*13)
	}
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("decoded %v, want %d×%d", b, w, h)
	}
	bg := colorOr(nil, defaultBg)
	lit := 0
	for y := 0; y < 3*13; y++ {
		for x := 0; x < w; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if uint8(r>>8) != bg.R || uint8(g>>8) != bg.G || uint8(b>>8) != bg.B {
				lit++
			}
		}
	}
	if lit < 200 {
		t.Fatalf("the picture is nearly blank: %d pixels drawn", lit)
	}
	if p := os.Getenv("ENSEMBLE_TERMINAL_PNG"); p != "" {
		os.WriteFile(filepath.Clean(p), buf.Bytes(), 0o644)
	}
}

// TestSettleOnPrompt: a shell printing PromptMark in its prompt says when a command is done.
func TestSettleOnPrompt(t *testing.T) {
	m := newTestManager(t, 2)
	s, err := m.Start(StartOptions{Args: []string{"-i"}, Env: []string{"PS1=" + PromptMark + "$ ", "ENV="}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first prompt", func() bool { return s.Prompts() > 0 })
	before := s.Prompts()
	start := time.Now()
	s.Write([]byte("sleep 0.3; echo done\r"))
	if !s.Settle(context.Background(), before, 50*time.Millisecond, 10*time.Second) {
		t.Fatalf("the prompt did not come back; screen:\n%s", s.Text())
	}
	if !hasLine(s.Tail(5), "done") {
		t.Fatalf("Tail(5) = %q, want a line done", s.Tail(5))
	}
	if time.Since(start) > 9*time.Second {
		t.Fatal("Settle waited for its limit")
	}
	if s.AltScreen() {
		t.Error("a shell prompt is not a full-screen program")
	}
}

func TestKeyBytes(t *testing.T) {
	tests := []struct {
		name string
		app  bool
		want string
	}{
		{"Enter", false, "\r"}, {"Up", false, "\x1b[A"}, {"Up", true, "\x1bOA"}, {"Ctrl+C", false, "\x03"},
		{"Ctrl+D", false, "\x04"}, {"q", false, "q"}, {"F5", false, "\x1b[15~"}, {"Backspace", false, "\x7f"},
	}
	for _, tt := range tests {
		if got, ok := KeyBytes(tt.name, tt.app); !ok || string(got) != tt.want {
			t.Errorf("KeyBytes(%q, %v) = %q, want %q", tt.name, tt.app, got, tt.want)
		}
	}
	if _, ok := KeyBytes("Hyper+Q", false); ok {
		t.Error("an unknown key has bytes")
	}
}
