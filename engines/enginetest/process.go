package enginetest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Environment of a re-executed server (see [MainHook]).
const (
	// EnvScript names the JSON script file to serve.
	EnvScript = "ENGINETEST_SCRIPT"
	// EnvAddr is the address to listen on; default 127.0.0.1:0.
	EnvAddr = "ENGINETEST_ADDR"
)

// readyPrefix starts the line [ServeScriptFile] prints once it listens.
const readyPrefix = "enginetest listening "

// ServeScriptFile serves the JSON script at path on addr until ctx ends.
// Once listening it prints "enginetest listening <base URL>" on a line of
// its own to standard output; that line is the readiness signal for
// whoever started the process. When the script names a Record file, every
// request is appended to it as a JSON line.
func ServeScriptFile(ctx context.Context, addr, path string) error {
	sc, err := ReadScript(path)
	if err != nil {
		return err
	}
	var opts []Option
	if sc.Record != "" {
		f, err := os.OpenFile(sc.Record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("enginetest: open record: %w", err)
		}
		defer f.Close()
		opts = append(opts, withRecord(f))
	}
	if os.Getenv("ENGINETEST_LOG") != "" {
		opts = append(opts, WithLogf(func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, format+"\n", args...)
		}))
	}
	s := New(sc, opts...)
	if err := s.Start(addr); err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "%s%s\n", readyPrefix, s.URL)
	<-ctx.Done()
	return s.Close()
}

// MainHook turns a test binary into a scripted model server when
// [EnvScript] is set, and returns otherwise. Call it first in TestMain:
//
//	func TestMain(m *testing.M) {
//		enginetest.MainHook()
//		os.Exit(m.Run())
//	}
//
// The server stops on SIGINT or SIGTERM and the process exits.
func MainHook() {
	path := os.Getenv(EnvScript)
	if path == "" {
		return
	}
	addr := os.Getenv(EnvAddr)
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := ServeScriptFile(ctx, addr, path)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ServerCommand is the command that serves the script file at path on addr
// by re-executing the running test binary (whose TestMain calls
// [MainHook]). Wrap its Path and Args to run it elsewhere, e.g. inside
// `unshare -n`; its Env carries the settings.
func ServerCommand(path, addr string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), EnvScript+"="+path, EnvAddr+"="+addr)
	return cmd
}

// Process is a scripted model server in a child process.
type Process struct {
	// URL is the server's base URL, as it announced it.
	URL string
	// Record is the JSON-lines file of its requests.
	Record string

	cmd  *exec.Cmd
	done chan error
}

// StartProcess writes sc to a temporary file and serves it from a child
// process (see [ServerCommand]) on addr ("127.0.0.1:0" for any port). The
// child is stopped when the test ends.
func StartProcess(t testing.TB, sc Script, addr string) *Process {
	t.Helper()
	dir := t.TempDir()
	if sc.Record == "" {
		sc.Record = filepath.Join(dir, "requests.jsonl")
	}
	path := filepath.Join(dir, "script.json")
	if err := sc.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	cmd := ServerCommand(path, addr)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("enginetest: start server process: %v", err)
	}
	p := &Process{Record: sc.Record, cmd: cmd, done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadString('\n')
			if url, ok := strings.CutPrefix(strings.TrimSpace(line), readyPrefix); ok {
				ready <- url
			}
			if err != nil {
				break
			}
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = p.Stop() })
	select {
	case p.URL = <-ready:
	case err := <-p.done:
		p.done <- err
		t.Fatalf("enginetest: server process exited before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("enginetest: server process did not announce its address within 30s")
	}
	return p
}

// Requests reads the requests the process has recorded so far.
func (p *Process) Requests() ([]Request, error) { return ReadRecord(p.Record) }

// Stop ends the process with SIGTERM (a kill after 5 s) and waits for it.
func (p *Process) Stop() error {
	select {
	case err := <-p.done:
		p.done <- err
		return err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		err := <-p.done
		p.done <- err
		return err
	}
}

// ReadRecord reads a JSON-lines request record.
func ReadRecord(path string) ([]Request, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("enginetest: read record: %w", err)
	}
	defer f.Close()
	var out []Request
	dec := json.NewDecoder(f)
	for {
		var r Request
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return out, nil // a line still being written ends the read
		}
		if err != nil {
			return out, fmt.Errorf("enginetest: read record %s: %w", path, err)
		}
		out = append(out, r)
	}
}
