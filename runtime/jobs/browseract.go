package jobs

import (
	"context"
	"fmt"
	"net/url"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/judge"
)

// A run's consequential clicks (spec 002 §8.16): a click on an element whose name orders, pays,
// sends, deletes or publishes, which the run's brief did not ask for, is asked on Needs me like a
// command the judge asks about (Allow once, Allow for this run, Deny); in Run unattended, with no
// one to ask, it is refused. The element's name comes from the run's last snapshot of the tab.

// judgeClick decides a run's click on ref in tab: nil when it may go ahead, else why not.
func (r *run) judgeClick(ctx context.Context, b Browser, tab, ref string) error {
	name := r.snaps.Name(tab, ref)
	word := browser.Consequential(name)
	if word == "" || browser.AskedFor(r.job.Brief, word) {
		return nil
	}
	site := ""
	for _, t := range b.Tabs(r.tabWork()) {
		if t.ID == tab {
			if u, err := url.Parse(t.URL); err == nil {
				site = u.Hostname()
			}
		}
	}
	key := site + " " + word
	r.mu.Lock()
	allowed := r.acts[key]
	r.mu.Unlock()
	if allowed {
		return nil
	}
	what := fmt.Sprintf("Clicking %q on %s would %s for the person, which the task did not ask for", name, site, word)
	if r.job.Settings.Mode == judge.ModeUnattended {
		return fmt.Errorf("%s; a run unattended leaves that to them: say so in report_result", what)
	}
	r.rec.add(KindDecision, Trace{Tool: "browser_click", Input: Redact(name), Decision: "ask", Reason: what + "."}, nil)
	reply, err := r.ask(ctx, Question{Kind: Approval, Text: what + ".", Options: ApprovalOptions, Recommended: Deny,
		Why: "It acts in the world for you.", Tool: "browser_click", Input: name})
	if err != nil {
		return err
	}
	switch reply.Option {
	case AllowForRun:
		r.mu.Lock()
		if r.acts == nil {
			r.acts = map[string]bool{}
		}
		r.acts[key] = true
		r.mu.Unlock()
		fallthrough
	case AllowOnce:
		r.rec.add(KindDecision, Trace{Tool: "browser_click", Decision: "allow", Reason: "Allowed by the person."}, nil)
		return nil
	}
	r.rec.add(KindDecision, Trace{Tool: "browser_click", Decision: "deny", Reason: "Refused: the person said no."}, nil)
	return fmt.Errorf("the person said no to %s", fmt.Sprintf("clicking %q on %s", name, site))
}
