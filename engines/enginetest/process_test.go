package enginetest

import (
	"testing"
	"time"
)

// TestStartProcess serves a JSON script from a re-executed test binary
// (TestMain calls MainHook) and reads its record back.
func TestStartProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	p := StartProcess(t, Script{Steps: []Step{
		Shell("ls -la"),
		Say("All done.").WhenLastUser("a.txt"),
	}}, "127.0.0.1:0")

	tu := reassembleAnthropic(t, postSSE(t, p.URL+"/v1/messages?beta=true", anthropicBody("list", "Bash")))
	if len(tu.calls) != 1 || tu.calls[0].name != "Bash" || compact(t, tu.calls[0].args) != `{"command":"ls -la","description":"Run a scripted command"}` {
		t.Fatalf("first reply %+v", tu)
	}
	body := anthropicBody("x", "Bash")
	body["messages"] = []any{
		map[string]any{"role": "user", "content": "list"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": tu.calls[0].id, "name": "Bash", "input": map[string]any{"command": "ls -la"}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": tu.calls[0].id, "content": "a.txt"}}},
	}
	if got := textOf(t, postSSE(t, p.URL+"/v1/messages?beta=true", body)); got != "All done." {
		t.Errorf("second reply %q", got)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	reqs, err := p.Requests()
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	if tr, ok := reqs[1].LastToolResult(); !ok || tr.Content != "a.txt" || tr.Name != "Bash" || tr.ID != tu.calls[0].id {
		t.Errorf("recorded tool result %+v %v", tr, ok)
	}
	if reqs[0].Header.Get("X-Api-Key") != "[redacted]" {
		t.Errorf("record holds the key: %q", reqs[0].Header.Get("X-Api-Key"))
	}
	if time.Since(reqs[0].Time) > time.Minute {
		t.Errorf("recorded time %v", reqs[0].Time)
	}
}

func TestServerCommandEnv(t *testing.T) {
	cmd := ServerCommand("/s.json", "127.0.0.1:8765")
	want := map[string]bool{EnvScript + "=/s.json": false, EnvAddr + "=127.0.0.1:8765": false}
	for _, e := range cmd.Env {
		if _, ok := want[e]; ok {
			want[e] = true
		}
	}
	for e, ok := range want {
		if !ok {
			t.Errorf("env lacks %s", e)
		}
	}
	if cmd.Args[len(cmd.Args)-1] != "-test.run=^$" {
		t.Errorf("args %v", cmd.Args)
	}
}
