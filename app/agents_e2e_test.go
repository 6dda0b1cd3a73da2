package app

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/acp"
	"github.com/ensemblework/ensemble/engines/codex"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/needs"
)

// agentUnderJudge is a real agent CLI from npm that [runsUnderTheJudge] drives through the
// runtime's API.
type agentUnderJudge struct {
	name              string // the driver's name, the run's agent
	pkg, version, bin string // the npm package and the program in it
	driver            func(bin string, log *slog.Logger) engines.Driver
	// setup points the agent at the scripted model at url through the test's environment (the
	// runtime passes its own environment on to the agent).
	setup func(t *testing.T, url string)
}

// TestCodexRunsUnderTheJudge gives tasks to the real Codex (`codex app-server`) through the
// runtime's API, as TestClaudeRunsUnderTheJudge does for Claude Code. Codex runs with approval
// policy "untrusted": it asks before every command it does not consider safe (a read-only `ls`
// it runs itself), so the checks use commands that write.
func TestCodexRunsUnderTheJudge(t *testing.T) {
	runsUnderTheJudge(t, agentUnderJudge{
		name: "codex", pkg: "@openai/codex", version: "0.171.0", bin: "codex",
		driver: func(bin string, log *slog.Logger) engines.Driver {
			return codex.New(codex.WithBinary(bin), codex.WithLogger(log))
		},
		setup: codexSetup("gpt-5.5"),
	})
}

// codexSetup points the real Codex at the scripted model at url, asking for model.
func codexSetup(model string) func(t *testing.T, url string) {
	return func(t *testing.T, url string) {
		codexHome, tmp := enginetest.CodexHome(t, url, model)
		t.Setenv("HOME", filepath.Dir(codexHome)) // `~` is a throwaway folder
		t.Setenv("CODEX_HOME", codexHome)
		t.Setenv("TMPDIR", tmp) // not holding CODEX_HOME, or Codex's sandbox cannot start
		t.Setenv(enginetest.CodexProviderKey, "dummy")
		t.Setenv("CODEX_DISABLE_UPDATE_NOTICE", "1")
		t.Setenv("RUST_LOG", "warn")
	}
}

// TestOpencodeRunsUnderTheJudge gives tasks to the real OpenCode (`opencode acp`) through the
// runtime's API, as TestClaudeRunsUnderTheJudge does for Claude Code.
func TestOpencodeRunsUnderTheJudge(t *testing.T) {
	runsUnderTheJudge(t, agentUnderJudge{
		name: "opencode", pkg: "opencode-ai", version: "1.18.33", bin: "opencode",
		driver: acpDriver("opencode"),
		setup: func(t *testing.T, url string) {
			home, env := enginetest.OpencodeEnv(t, url)
			setEnv(t, home, env)
		},
	})
}

// acpDriver is the ACP driver of the agent named, with its binary at bin.
func acpDriver(name string) func(bin string, log *slog.Logger) engines.Driver {
	return func(bin string, log *slog.Logger) engines.Driver {
		p, _ := acp.ProfileNamed(name)
		return acp.New(p, acp.WithBinary(bin), acp.WithLogger(log))
	}
}

// setEnv points the test's HOME at home and sets env, for an agent the test starts.
func setEnv(t *testing.T, home string, env map[string]string) {
	t.Setenv("HOME", home)
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// runsUnderTheJudge gives tasks to the agent through the runtime's API, against the scripted
// model in a loopback-only network namespace: a command the judge asks about waits on Needs me
// and runs only once the person allows it; one the person refuses never runs and the model is
// told; a dangerous one is refused by the judge's floor without asking anyone.
func runsUnderTheJudge(t *testing.T, a agentUnderJudge) {
	if testing.Short() {
		t.Skipf("drives the real %s; not in -short", a.name)
	}
	bin := enginetest.InstallNPM(t, a.pkg, a.version, a.bin)
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	model := enginetest.NewServer(t)
	a.setup(t, model.URL)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	start := time.Now()
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: log,
		Drivers: map[string]engines.Driver{a.name: a.driver(bin, log)}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	t.Logf("%s: runtime up in %v", a.name, time.Since(start).Round(time.Millisecond))
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	// assign starts a run in a new folder (Run asks), so each check sees only its own files.
	assign := func(t *testing.T, title string) (jobs.Job, string) {
		t.Helper()
		folder, start := t.TempDir(), time.Now()
		var j jobs.Job
		err := c.do(context.Background(), "POST", "/api/agent/assign", map[string]any{
			"title": title, "agent": a.name, "folder": folder,
			"settings": map[string]any{"mode": "ask", "maxTurns": 10}}, &j)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("assign answered in %v", time.Since(start).Round(time.Millisecond)) // the first one detects the agent
		return j, folder
	}
	// check runs one check, logs how long it took and that it used its whole script.
	check := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			start, exhausted, seen := time.Now(), len(model.Exhausted()), len(model.Requests())
			defer func() {
				for _, r := range model.Requests()[seen:] {
					t.Logf("model request %d (%s) at +%v", r.Seq, cmp.Or(r.Side, "turn"), r.Time.Sub(start).Round(time.Millisecond))
				}
				t.Logf("%s %s took %v", a.name, name, time.Since(start).Round(time.Millisecond))
			}()
			f(t)
			if n := model.Remaining(); n != 0 {
				t.Errorf("%d script steps were not used", n)
			}
			if got := model.Exhausted(); len(got) > exhausted {
				t.Errorf("%d model requests found the script finished", len(got)-exhausted)
			}
		})
	}

	check("AskedEditWaitsOnNeedsMe", func(t *testing.T) {
		model.Script(enginetest.Shell("touch made_by_agent.txt"), enginetest.Say("Made the file."))
		j, folder := assign(t, "Make a file")
		asked := time.Now()
		d := waitNeed(t, c, j.ID)
		t.Logf("the decision reached Needs me %v after the assignment", time.Since(asked).Round(time.Millisecond))
		if d.Kind != needs.Permission || !strings.Contains(d.Call, "touch made_by_agent.txt") {
			t.Fatalf("decision = %+v", d)
		}
		file := filepath.Join(folder, "made_by_agent.txt")
		time.Sleep(500 * time.Millisecond) // a command that ran anyway would have made the file by now
		if _, err := os.Stat(file); err == nil {
			t.Fatal("the command ran before the person answered")
		}
		if err := c.do(context.Background(), "POST", "/api/needs/"+d.ID+"/answer", map[string]any{"option": needs.AllowOnce}, nil); err != nil {
			t.Fatal(err)
		}
		j = waitRun(t, c, j.ID, jobs.Done)
		if _, err := os.Stat(file); err != nil {
			t.Errorf("the allowed command did not run: %v", err)
		}
		if j.Summary != "Made the file." {
			t.Errorf("summary %q", j.Summary)
		}
		// The trace names the command the agent ran (OpenCode first says only its folder).
		if in := toolInputs(t, c, j.ID); !strings.Contains(strings.Join(in, "\n"), "touch made_by_agent.txt") {
			t.Errorf("the trace's tool calls do not name the command: %q", in)
		}
		// What the agent itself says it ran with (spec 003 §3.4): at least its model.
		if j.Observed.Model == "" {
			t.Errorf("%s reported no model: %+v", a.name, j.Observed)
		}
		t.Logf("observed %+v", j.Observed)
	})

	check("RefusedOnNeedsMe", func(t *testing.T) {
		model.Script(
			enginetest.Shell("touch refused_by_person.txt"),
			enginetest.Say("Leaving it, as you said.").WhenLastUser("the person said no"),
		)
		since := len(model.Requests())
		j, folder := assign(t, "Make another file")
		d := waitNeed(t, c, j.ID)
		if d.Kind != needs.Permission || !strings.Contains(d.Call, "touch refused_by_person.txt") {
			t.Fatalf("decision = %+v", d)
		}
		if err := c.do(context.Background(), "POST", "/api/needs/"+d.ID+"/answer", map[string]any{"option": needs.Refuse}, nil); err != nil {
			t.Fatal(err)
		}
		j = waitRun(t, c, j.ID, jobs.Done)
		if _, err := os.Stat(filepath.Join(folder, "refused_by_person.txt")); err == nil {
			t.Error("the refused command ran")
		}
		told := toldModel(model, since, "Refused: the person said no")
		if told == "" {
			t.Error("the refusal never reached the model")
		}
		t.Logf("the agent was told: %q", told)
		if strings.Contains(told, "said no: Refuse") {
			t.Error("the option's label reached the model as if the person had written it")
		}
		if j.Summary != "Leaving it, as you said." {
			t.Errorf("summary %q", j.Summary)
		}
	})

	check("DangerousCommandRefusedByTheFloor", func(t *testing.T) {
		model.Script(
			enginetest.Shell("rm -rf ~"),
			enginetest.Say("I will not do that.").WhenLastUser("Refused"),
		)
		home, _ := os.UserHomeDir()
		canary := filepath.Join(home, "canary.txt")
		if err := os.WriteFile(canary, []byte("still here\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		since := len(model.Requests())
		j, _ := assign(t, "Clean up")
		j = waitRun(t, c, j.ID, jobs.Done)
		if n := needsOf(t, c, j.ID); len(n) != 0 {
			t.Errorf("a floor refusal asked the person: %+v", n)
		}
		if _, err := os.Stat(canary); err != nil {
			t.Errorf("the home folder was removed: %v", err)
		}
		told := toldModel(model, since, "Refused:")
		if !strings.Contains(told, "rm -rf") || strings.Contains(told, "the person said no") {
			t.Errorf("the model was told %q, want the floor's refusal and its reason", told)
		}
		t.Logf("the agent was told: %q", told)
		if j.Summary != "I will not do that." {
			t.Errorf("summary %q", j.Summary)
		}
	})
}

// toldModel is the first text holding s of a message the model was sent after its first since
// requests, or "".
func toldModel(model *enginetest.Server, since int, s string) string {
	for _, r := range model.Requests()[since:] {
		for _, m := range r.Messages {
			for _, b := range m.Blocks {
				if strings.Contains(b.Text, s) {
					return b.Text
				}
			}
		}
	}
	return ""
}

// toolInputs are the data of a run's run.tool_start events, from its stream up to the end of the
// replay.
func toolInputs(t *testing.T, c *client, id string) []string {
	t.Helper()
	var out []string
	for _, ev := range runTrace(t, c, id) {
		if ev.kind == jobs.KindToolStart {
			out = append(out, ev.data)
		}
	}
	return out
}
