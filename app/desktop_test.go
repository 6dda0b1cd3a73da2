package app

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needDesktopBuild skips where the desktop window cannot be built and shown (no GTK/WebKit
// development packages, no Xvfb); in CI, where .ci/run installs them, it fails instead.
func needDesktopBuild(t *testing.T) {
	t.Helper()
	var missing []string
	if exec.Command("pkg-config", "--exists", "webkit2gtk-4.1", "gtk+-3.0").Run() != nil {
		missing = append(missing, "libgtk-3-dev and libwebkit2gtk-4.1-dev")
	}
	for _, p := range []string{"Xvfb", "import"} {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := "the desktop window needs " + strings.Join(missing, ", ") + " (apt-get install libgtk-3-dev libwebkit2gtk-4.1-dev xvfb imagemagick)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// TestDesktopWindowShowsBoard builds the desktop app, starts it under Xvfb, and checks that the
// window signed in to its runtime and shows the board; the screenshot is left to be looked at.
func TestDesktopWindowShowsBoard(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the desktop app")
	}
	needUI(t)
	needDesktopBuild(t)
	bin := filepath.Join(t.TempDir(), "ensemble-desktop")
	build := exec.Command("go", "build", "-tags", "desktop,production,webkit2_41", "-o", bin, "github.com/ensemblework/ensemble")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("desktop build: %v\n%s", err, out)
	}

	display := fmt.Sprintf(":%d", 90+os.Getpid()%100)
	xvfb := exec.Command("Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	if err := xvfb.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { xvfb.Process.Kill(); xvfb.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The display is up when its socket is there.
	eventually(t, ctx, "Xvfb's display socket", func() bool {
		_, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", 90+os.Getpid()%100))
		return err == nil
	})

	data := t.TempDir()
	app := exec.Command(bin, "--data", data)
	app.Env = append(os.Environ(), "DISPLAY="+display, "NO_AT_BRIDGE=1")
	var out lockedBuffer
	app.Stdout, app.Stderr = &out, &out
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- app.Wait() }()
	defer app.Process.Kill()

	// The window has signed in when the runtime says a browser did (the window's session is held in
	// memory only, as it lasts as long as the runtime).
	eventually(t, ctx, "the window signed in", func() bool { return strings.Contains(out.String(), `msg="a browser signed in"`) })
	// The board has rendered when the screen shows more than one colour and two pictures in a row
	// are the same.
	var shotPNG, last []byte
	eventually(t, ctx, "the window painted and settled", func() bool {
		b, err := exec.Command("import", "-display", display, "-window", "root", "png:-").Output()
		if err != nil {
			return false
		}
		shotPNG, last = b, shotPNG
		return bytes.Equal(shotPNG, last) && colourful(shotPNG)
	})
	shot := filepath.Join(screenshotDir(t), "desktop-window.png")
	if err := os.WriteFile(shot, shotPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)

	// SIGTERM closes the window and stops its runtime cleanly.
	app.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("the desktop app did not stop within 15 s of SIGTERM:\n%s", out.String())
	}
	if _, err := os.Stat(apiFilePath(data)); !os.IsNotExist(err) {
		t.Errorf("api.json is still there after the window closed: %v", err)
	}
}

// colourful reports whether a PNG shows more than one colour: not a blank screen.
func colourful(b []byte) bool {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return false
	}
	r := img.Bounds()
	first := img.At(r.Min.X, r.Min.Y)
	for y := r.Min.Y; y < r.Max.Y; y += 7 {
		for x := r.Min.X; x < r.Max.X; x += 7 {
			if img.At(x, y) != first {
				return true
			}
		}
	}
	return false
}
