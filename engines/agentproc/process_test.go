//go:build unix

package agentproc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

var quick = Graces{Interrupt: 200 * time.Millisecond, Close: 200 * time.Millisecond, Term: 300 * time.Millisecond, Drain: time.Second}

func TestProcessStopEscalates(t *testing.T) {
	enginetest.NoLeaks(t)
	dir := t.TempDir()
	// Ignores its input closing and SIGTERM, says something on stderr, and
	// leaves a child running.
	p, err := Start(Command{Name: "agent", Path: "/bin/sh", Dir: dir, Graces: quick, Args: []string{"-c",
		`trap '' TERM; echo "first" >&2; echo "last words" >&2; sleep 300 & echo $! > child; echo $$ > self; while :; do sleep 1; done`}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var werr error
	p.Serve(context.Background(), Handlers{
		Out:   func(r io.Reader) { _, _ = io.Copy(&out, r) },
		Ended: func(err error) { werr = err },
		Stop:  func(context.Context) error { t.Error("Stop called without ctx ending"); return nil },
	})
	self, child := enginetest.ReadPID(t, filepath.Join(dir, "self")), enginetest.ReadPID(t, filepath.Join(dir, "child"))
	if p.Pid() != self {
		t.Errorf("Pid %d, the shell is %d", p.Pid(), self)
	}
	interrupted := false
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Stop(ctx, func(ictx context.Context) bool {
		interrupted = true
		if _, ok := ictx.Deadline(); !ok {
			t.Error("the interrupt has no deadline")
		}
		return false
	}); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !interrupted || !p.HasExited() || werr == nil {
		t.Errorf("interrupted %v, exited %v, wait error %v", interrupted, p.HasExited(), werr)
	}
	select {
	case <-p.Done():
	default:
		t.Error("Stop returned before the run was over")
	}
	if got := LastLine(p.Stderr()); got != "last words" {
		t.Errorf("stderr's last line %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (enginetest.Alive(self) || enginetest.Alive(child)) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if enginetest.Alive(self) || enginetest.Alive(child) {
		t.Errorf("still running after Stop: %d %v, its child %d %v", self, enginetest.Alive(self), child, enginetest.Alive(child))
	}
	// A second Stop only waits.
	if err := p.Stop(ctx, func(context.Context) bool { t.Error("interrupted twice"); return false }); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestProcessContextStops(t *testing.T) {
	enginetest.NoLeaks(t)
	p, err := Start(Command{Name: "agent", Path: "/bin/sh", Args: []string{"-c", `while read -r line; do echo "$line"; done`}, Graces: quick})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	stopped := make(chan struct{})
	p.Serve(ctx, Handlers{
		Out:   func(r io.Reader) { _, _ = io.Copy(&out, r) },
		Ended: func(error) {},
		Stop: func(sctx context.Context) error {
			defer close(stopped)
			return p.Stop(sctx, func(context.Context) bool { return false })
		},
	})
	if err := NewLineWriter("agent", p.Input()).Send(map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the context ending did not stop the process")
	}
	<-p.Done()
	if out.String() != `{"a":1}`+"\n" {
		t.Errorf("echoed %q", out.String())
	}
}

func TestStartMissing(t *testing.T) {
	_, err := Start(Command{Name: "agent", Path: filepath.Join(t.TempDir(), "nope"), InstallHint: "install it"})
	if !errors.Is(err, engines.ErrNotInstalled) || !strings.HasSuffix(err.Error(), ": install it") {
		t.Errorf("got %v, want ErrNotInstalled with the hint", err)
	}
}

func TestLines(t *testing.T) {
	var b bytes.Buffer
	w := NewLineWriter("agent", &b)
	for _, v := range []any{map[string]string{"k": "v"}, 1} {
		if err := w.Send(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Send(func() {}); err == nil || !strings.HasPrefix(err.Error(), "agent: encode: ") {
		t.Errorf("encoding a func: %v", err)
	}
	var got []string
	if err := ReadLines(&b, 100, func(l []byte) { got = append(got, string(l)) }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != `{"k":"v"}|1` {
		t.Errorf("read %q", got)
	}
	if err := ReadLines(strings.NewReader(strings.Repeat("x", 100<<10)+"\n"), 1000, func([]byte) {}); err == nil {
		t.Error("a line past max was read")
	}
	r, wp, _ := os.Pipe()
	r.Close()
	if err := NewLineWriter("agent", wp).Send(1); err == nil || !strings.HasPrefix(err.Error(), "agent: write: ") {
		t.Errorf("writing to a closed pipe: %v", err)
	}
	wp.Close()
}

func TestTail(t *testing.T) {
	tl := &tail{max: 4}
	_, _ = tl.Write([]byte("abc"))
	_, _ = tl.Write([]byte("def"))
	if tl.String() != "cdef" {
		t.Errorf("kept %q", tl.String())
	}
	if LastLine("a\nb \n\n") != "b" {
		t.Error("LastLine")
	}
}
