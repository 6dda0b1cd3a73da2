package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

var _ engines.Host = (*run)(nil)

// errNoNeeds refuses what would need the person when there is no Needs me to ask on.
var errNoNeeds = errors.New("Needs me is not available in this Ensemble, so nobody could be asked")

// Permit judges a tool call: allowed, refused with the reason the agent is told, or asked on Needs
// me, waiting for the person. While the run is paused no call is permitted: Permit waits.
func (r *run) Permit(ctx context.Context, call engines.ToolCall) (engines.Permission, error) {
	if err := r.waitUnpaused(ctx); err != nil {
		return engines.Permission{}, err
	}
	r.touch()
	jc := JudgeCall(call)
	r.mu.Lock()
	kept := cloneKept(r.kept)
	if jc.Tool == judge.ToolRead && slices.ContainsFunc(jc.Paths, func(p string) bool { return secrets.KeyPath(p) != "" }) {
		r.secretCalls[call.ID] = true
	}
	r.mu.Unlock()
	v := judge.Decide(jc, JudgeSettings(r.job.Settings, r.job.FolderKind, r.job.WorkDir, r.places, kept))
	input := callPreview(call)
	switch v.Decision {
	case judge.Allow:
		return engines.Permission{Allow: true}, nil
	case judge.Refuse:
		if v.Clone != nil {
			// The agent's clone is refused and made by Ensemble instead, as the reason says.
			if err := cloneForAgent(ctx, *v.Clone, r.job.WorkDir); err != nil {
				v.Reason = "With the sandbox on, Ensemble clones repositories for the run itself, and could not clone `" +
					v.Clone.URL + "`: " + strings.TrimSuffix(err.Error(), ".") + "."
			}
		}
		msg := v.Message()
		r.rec.add(KindDecision, Trace{Tool: call.Tool, ToolID: call.ID, Input: input, Decision: "refuse",
			Reason: Redact(v.Reason), Rule: v.Rule}, nil)
		return engines.Permission{Reason: msg}, nil
	}
	r.rec.add(KindDecision, Trace{Tool: call.Tool, ToolID: call.ID, Input: input, Decision: "ask",
		Reason: Redact(v.Reason), Rule: v.Rule}, nil)
	rec, recWhy := recommend(v, jc.Tool, r.job.Settings, r.job.WorkDir)
	reply, err := r.ask(ctx, Question{Kind: Approval, Text: Redact(v.Reason), Options: ApprovalOptions,
		Recommended: rec, Why: recWhy, Tool: call.Tool, Input: input, Verdict: &v})
	if err != nil {
		if ctx.Err() != nil {
			return engines.Permission{}, ctx.Err()
		}
		r.rec.add(KindDecision, Trace{Tool: call.Tool, ToolID: call.ID, Decision: "refuse", Reason: err.Error() + "."}, nil)
		return engines.Permission{Reason: "Refused: " + err.Error() + "."}, nil
	}
	switch reply.Option {
	case AllowOnce:
		r.markUnsandboxed(call)
		r.rec.add(KindDecision, Trace{Tool: call.Tool, ToolID: call.ID, Decision: "allow", Reason: "Allowed once."}, nil)
		return engines.Permission{Allow: true}, nil
	case AllowForRun:
		r.markUnsandboxed(call)
		r.keep(jc, v)
		r.rec.add(KindDecision, Trace{Tool: call.Tool, ToolID: call.ID, Decision: "allow_run", Reason: "Allowed for this run."}, nil)
		return engines.Permission{Allow: true}, nil
	}
	why := "Refused: the person said no."
	if reply.Text != "" && reply.Text != ApprovalOptions[Deny] {
		why = "Refused: the person said no: " + Redact(reply.Text)
	}
	r.rec.add(KindDecision, Trace{Tool: call.Tool, ToolID: call.ID, Decision: "deny", Reason: why}, nil)
	return engines.Permission{Reason: why}, nil
}

// markUnsandboxed notes an allowed call that leaves the sandbox, for its step's receipt.
func (r *run) markUnsandboxed(call engines.ToolCall) {
	if !call.Unsandboxed {
		return
	}
	r.mu.Lock()
	r.unsandboxed[call.ID] = true
	r.mu.Unlock()
}

// Ask puts the agent's question to the person. In Run unattended it is answered at once with the
// recommended option (with none, that no one is there to answer), kept on Needs me as answered by
// the run, and the run's events say so.
func (r *run) Ask(ctx context.Context, q engines.Question) (engines.Answer, error) {
	r.touch()
	text := Redact(q.Text)
	if r.job.Settings.Mode == judge.ModeUnattended {
		return r.askUnattended(ctx, q, text)
	}
	r.rec.add(KindQuestion, Trace{Text: text, Decision: "ask"}, nil)
	reply, err := r.ask(ctx, Question{Kind: AgentQuestion, Text: text, Options: q.Options,
		Recommended: q.Recommended, FreeText: q.FreeText})
	if err != nil {
		return engines.Answer{}, err
	}
	r.rec.add(KindQuestion, Trace{Text: text, Decision: "answered", Reason: Redact(reply.Text)}, nil)
	return engines.Answer{Option: reply.Option, Text: reply.Text}, nil
}

// askUnattended answers a question in Run unattended without waiting for anyone.
func (r *run) askUnattended(ctx context.Context, q engines.Question, text string) (engines.Answer, error) {
	recommended := q.Recommended >= 0 && q.Recommended < len(q.Options)
	var a engines.Answer
	switch {
	case r.s.opts.Asker != nil:
		reply, err := r.ask(ctx, Question{Kind: AgentQuestion, Text: text, Options: q.Options,
			Recommended: q.Recommended, FreeText: q.FreeText || !recommended, Unattended: true})
		if err != nil {
			return engines.Answer{}, err
		}
		a = engines.Answer{Option: reply.Option, Text: reply.Text}
	case recommended:
		a = engines.Answer{Option: q.Recommended, Text: q.Options[q.Recommended]}
	default:
		return engines.Answer{}, errNoNeeds
	}
	why := "Run unattended took the recommended answer: " + Redact(a.Text)
	if !recommended {
		why = "Run unattended answered for the person: " + Redact(a.Text)
	}
	r.rec.add(KindQuestion, Trace{Text: text, Decision: "recommended", Reason: why}, nil)
	return a, nil
}

// ask waits on Needs me. The time it waits counts neither as quiet nor against the minutes limit.
func (r *run) ask(ctx context.Context, q Question) (Reply, error) {
	asker := r.s.opts.Asker
	if asker == nil {
		return Reply{}, errNoNeeds
	}
	q.RunID, q.TaskID, q.Agent, q.Title = r.job.ID, r.job.TaskID, r.job.Agent, r.title
	q.Text, q.Input = r.s.hide(q.Text), r.s.hide(q.Input)
	q.Options = hideAll(q.Options, r.s.hide)
	if q.Verdict != nil {
		v := *q.Verdict
		v.Reason = r.s.hide(v.Reason)
		v.Touches.Programs, v.Touches.Reads = hideAll(v.Touches.Programs, r.s.hide), hideAll(v.Touches.Reads, r.s.hide)
		v.Touches.Writes, v.Touches.Hosts = hideAll(v.Touches.Writes, r.s.hide), hideAll(v.Touches.Hosts, r.s.hide)
		q.Verdict = &v
	}
	r.mu.Lock()
	r.asking++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.asking--
		r.lastSign = time.Now()
		r.mu.Unlock()
	}()
	return asker.Ask(ctx, q)
}

// Event records what the agent did. It never blocks on the database.
func (r *run) Event(ev engines.Event) {
	r.touch()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.observed.observe(ev) {
		r.rec.add("", Trace{}, map[string]any{"observed": jsonValue{r.observed}})
	}
	switch ev.Kind {
	case engines.EventStarted:
		if ev.Session != "" {
			r.session = ev.Session
		}
		if ev.Enforcement != nil {
			e := *ev.Enforcement
			r.enforcement = &e
		}
		r.rec.add(KindStarted, Trace{Session: ev.Session, Model: ev.Model, Attempt: r.attempt, Sandbox: r.enforcement},
			map[string]any{"session_id": r.session, "model": ev.Model})
	case engines.EventMessage:
		r.rec.add(KindMessage, Trace{Text: trim(ev.Text, previewText)}, nil)
	case engines.EventThinking:
		r.rec.add(KindThinking, Trace{Text: trim(ev.Text, previewText)}, nil)
	case engines.EventToolStart:
		r.steps++
		oc := &openCall{tool: ev.Tool, at: time.Now(), secret: r.secretCalls[ev.ToolID] || readsSecretFile(ev.Input)}
		r.open[ev.ToolID] = oc
		if r.steps > maxSteps {
			return // counted, not kept
		}
		oc.step = r.steps
		r.rec.add(KindToolStart, Trace{Step: oc.step, Tool: ev.Tool, ToolID: ev.ToolID, Input: inputPreview(ev.Input),
			Sandbox: r.receiptOfLocked(ev.ToolID)}, map[string]any{"steps": oc.step})
	case engines.EventToolEnd:
		oc := r.open[ev.ToolID]
		delete(r.open, ev.ToolID)
		delete(r.secretCalls, ev.ToolID)
		if oc == nil {
			oc = &openCall{tool: ev.Tool, at: time.Now()}
		} else if oc.step == 0 {
			return
		}
		out := trim(ev.Output, previewOutput)
		if oc.secret {
			out = "(not kept: the call read a secrets file)"
		}
		// Not every agent marks a command that exited non-zero as failed: its output tells.
		stopped := r.enforcement != nil && r.enforcement.By != "" && sandboxStopped(ev.Output)
		r.rec.add(KindToolEnd, Trace{Step: oc.step, Tool: ev.Tool, ToolID: ev.ToolID, Output: out, Failed: ev.Failed,
			DurationMs: time.Since(oc.at).Milliseconds(), SandboxStopped: stopped}, nil)
	case engines.EventUsage:
		if ev.Usage != nil {
			r.usage = *ev.Usage
			u := r.usage
			r.rec.add(KindUsage, Trace{Usage: &u}, map[string]any{"usage": jsonValue{u}})
		}
	case engines.EventError:
		r.rec.add(KindError, Trace{Text: trim(ev.Text, previewText)}, nil)
	}
}

// keep remembers an "allow for this run" answer: the outside folders, command kinds, edits, sites
// or MCP tools the verdict names.
func (r *run) keep(c judge.Call, v judge.Verdict) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := &r.kept
	add := func(list []string, vals ...string) []string {
		for _, x := range vals {
			if x != "" && !slices.Contains(list, x) {
				list = append(list, x)
			}
		}
		return list
	}
	k.Folders = add(k.Folders, v.Touches.Folders...)
	k.Commands = add(k.Commands, v.Touches.Kinds...)
	switch c.Tool {
	case judge.ToolEdit:
		if len(v.Touches.Folders) == 0 {
			k.Edits = true
		}
	case judge.ToolFetch:
		if u, err := url.Parse(c.URL); err == nil {
			k.Sites = add(k.Sites, u.Hostname())
		}
		k.Sites = add(k.Sites, v.Touches.Hosts...)
	case judge.ToolMCP:
		k.Tools = add(k.Tools, c.Server+"/"+c.Name)
		// Allow for this run on one browser tool covers the run's other browser tools, and the
		// same for capture (spec 003).
		if c.Server == judge.OwnServer {
			for _, group := range []string{"browser", "capture"} {
				if strings.HasPrefix(c.Name, group+"_") {
					k.Tools = add(k.Tools, group)
				}
			}
		}
	}
	r.rec.add("", Trace{}, map[string]any{"kept": jsonValue{cloneKept(*k)}})
}

func cloneKept(k judge.Kept) judge.Kept {
	return judge.Kept{Folders: slices.Clone(k.Folders), Commands: slices.Clone(k.Commands), Edits: k.Edits,
		Sites: slices.Clone(k.Sites), Tools: slices.Clone(k.Tools)}
}

// callPreview is what a call does, in a line: its command, else its URL, else its input.
func callPreview(c engines.ToolCall) string {
	switch {
	case c.Command != "":
		return trim(c.Command, previewInput)
	case c.URL != "":
		return trim(c.URL, previewInput)
	}
	return inputPreview(c.Input)
}

// readsSecretFile looks for a secrets file among the usual path fields of a tool's input.
func readsSecretFile(raw json.RawMessage) bool {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil {
		return false
	}
	for _, k := range []string{"file_path", "path", "notebook_path"} {
		if p, ok := in[k].(string); ok && secrets.KeyPath(p) != "" {
			return true
		}
	}
	return false
}
