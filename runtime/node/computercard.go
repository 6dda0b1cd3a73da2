package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// ComputerAsk is a computer card's question (data.type "computer", spec 002 §8.13): the call, and
// the folders or addresses it asks for with Once, This mission and (where offered) Always.
type ComputerAsk struct {
	Tool    string           `json:"tool"`
	Folder  string           `json:"folder"`
	Command string           `json:"command,omitempty"`
	Paths   []string         `json:"paths,omitempty"`
	URL     string           `json:"url,omitempty"`
	Ask     []computer.Scope `json:"ask"`
	Always  bool             `json:"always"`
	Mission string           `json:"mission"`
	Keep    string           `json:"keep,omitempty"` // the owner's answer: once, mission or always
}

// The decisions a computer card takes besides discard; approve is Once.
const (
	DecideOnce    = "once"
	DecideMission = "mission"
	DecideAlways  = "always"
)

// OnceFor is how long a Once answer waits for the call it was given for, when the call's turn
// parked and the node calls again.
const OnceFor = 30 * time.Minute

// grant is a Once answer not used yet.
type grant struct {
	scopes []computer.Scope
	until  time.Time
}

// options are the card's answers as Needs me lists them, the discard last.
func (c Card) options() []string {
	switch c.Type {
	case "sudo":
		return []string{"Run without a password", "Decline"}
	case CardLogin:
		return []string{"I'm done", "Not now"}
	case CardMediaPreview:
		return []string{"Release", "Discard"}
	}
	if c.Type != "computer" || c.Computer == nil {
		return []string{"Approve", "Discard"}
	}
	if c.Computer.Always {
		return []string{"Once", "This mission", "Always", "Discard"}
	}
	return []string{"Once", "This mission", "Discard"}
}

// decisionOf is the decision a Needs me option stands for.
func (c Card) decisionOf(opt int) string {
	switch c.options()[min(max(opt, 0), len(c.options())-1)] {
	case "Once", "Approve", "Run without a password", "I'm done", "Release":
		return Approve
	case "This mission":
		return DecideMission
	case "Always":
		return DecideAlways
	}
	return Discard
}

// optionOf is the Needs me option a decision stands for.
func (c Card) optionOf(decision string) int {
	if decision == DecideOnce {
		decision = Approve
	}
	for i := range c.options() {
		if c.decisionOf(i) == decision {
			return i
		}
	}
	return 0
}

// checkDecision refuses a decision the card does not take.
func (c Card) checkDecision(decision string) error {
	switch decision {
	case Approve, Discard:
		return nil
	case DecideOnce, DecideMission:
		if c.Type == "computer" {
			return nil
		}
	case DecideAlways:
		if c.Type == "computer" && c.Computer != nil && c.Computer.Always {
			return nil
		}
		if c.Type == "computer" {
			return problem.Invalid("This card does not offer Always: answer once or for this mission.")
		}
	}
	return problem.Invalid("This card takes approve or discard, not %q.", decision)
}

// askComputer puts the call on a computer card and waits for the answer.
func (s *Service) askComputer(ctx context.Context, c *turnCtx, tool string, call computer.Call, d computer.Decision) (bool, string, error) {
	ask := &ComputerAsk{Tool: tool, Folder: call.Folder, Command: call.Command, Paths: call.Paths, URL: call.URL, Ask: d.Ask, Always: d.Always,
		Mission: missionKey(c.rt.turn)}
	what := "use " + scopeWords(d.Ask)
	switch {
	case call.Op == computer.OpAct:
		what = fmt.Sprintf("click “%s” on %s", oneLineOf(call.Command, 120), siteOf(call.URL))
	case call.Command != "":
		what = fmt.Sprintf("run `%s` in %s", oneLineOf(call.Command, 200), call.Folder)
	case call.Op == computer.OpBrowse:
		what = "open " + call.URL + " in its browser"
	case call.URL != "":
		what = "call " + call.URL
	case len(call.Paths) > 0:
		what = fmt.Sprintf("change %s", strings.Join(call.Paths, ", "))
	}
	body := fmt.Sprintf("%s asks to %s. %s", c.node.Name, what, strings.TrimSuffix(d.Reason, " it is asked on a card."))
	res, err := s.cardAndWait(ctx, c, strings.TrimSpace(body), Card{Type: "computer", Computer: ask})
	if err != nil {
		return false, "", err
	}
	return strings.HasPrefix(res.Summary, "Your owner approved"), res.Summary, nil
}

func scopeWords(sc []computer.Scope) string {
	var out []string
	for _, s := range sc {
		out = append(out, s.Value)
	}
	return strings.Join(out, ", ")
}

// computerCardWork keeps a computer card's answer: Once for the call waiting on it (or the next
// like it), This mission and Always in SQLite.
func (s *Service) computerCardWork(ctx context.Context, c *Card, decision string) (string, error) {
	a := c.Computer
	if a == nil {
		return "", fmt.Errorf("the card names no call")
	}
	keep := map[string]string{Approve: computer.KeepOnce, DecideOnce: computer.KeepOnce, DecideMission: computer.KeepMission, DecideAlways: computer.KeepAlways}[decision]
	if keep == computer.KeepAlways && !a.Always {
		return "", problem.Invalid("This card is answered Once or for this mission, not always.")
	}
	a.Keep = keep
	if keep == computer.KeepOnce {
		s.mu.Lock()
		s.grants[c.NodeID] = append(s.grants[c.NodeID], grant{scopes: a.Ask, until: s.now().Add(OnceFor)})
		s.mu.Unlock()
		return "Allowed once: " + scopeWords(a.Ask) + ".", nil
	}
	if err := s.cfg.Computer.Answers.Keep(ctx, c.NodeID, a.Mission, keep, a.Ask); err != nil {
		return "", err
	}
	if keep == computer.KeepAlways {
		return "Allowed always: " + scopeWords(a.Ask) + ".", nil
	}
	return "Allowed for this mission: " + scopeWords(a.Ask) + ".", nil
}

// grantsOf are the node's Once answers not used yet.
func (s *Service) grantsOf(nodeID string) []computer.Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []computer.Scope
	now := s.now()
	keep := s.grants[nodeID][:0]
	for _, g := range s.grants[nodeID] {
		if now.Before(g.until) {
			keep = append(keep, g)
			out = append(out, g.scopes...)
		}
	}
	s.grants[nodeID] = keep
	return out
}

// useGrants spends the Once answers a call used: each covers one call.
func (s *Service) useGrants(nodeID string, call computer.Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gs := s.grants[nodeID]
	for i, g := range gs {
		if slices.ContainsFunc(g.scopes, func(sc computer.Scope) bool { return covers(sc, call) }) {
			s.grants[nodeID] = append(gs[:i:i], gs[i+1:]...)
			return
		}
	}
}

func covers(sc computer.Scope, call computer.Call) bool {
	switch sc.Kind {
	case computer.ScopeAct:
		return call.Op == computer.OpAct
	case computer.ScopeAddress:
		return call.URL != "" && call.Op != computer.OpAct
	}
	return sc.Covers(call.Folder) || slices.ContainsFunc(call.Paths, sc.Covers)
}

// KindComputerTool is a node's call on its owner's computer, ledgered by name: the tool, the
// folder, the program or address, the rung that allowed it; never the output.
const KindComputerTool events.Kind = "node.computer_tool"

// ComputerTool is the data of a KindComputerTool event.
type ComputerTool struct {
	NodeID  string `json:"nodeId"`
	Tool    string `json:"tool"`
	Folder  string `json:"folder"`
	Program string `json:"program,omitempty"`
	Rung    string `json:"rung"`
	Failed  bool   `json:"failed,omitempty"`
	// CommandHash is a sudo command's SHA-256, which the ledger keeps instead of the command.
	CommandHash string `json:"commandSha256,omitempty"`
	ExitCode    *int   `json:"exitCode,omitempty"`
}

func (s *Service) noteComputer(ctx context.Context, c *turnCtx, tool, folder, program string, rung computer.Rung, err error) {
	s.emitComputer(ctx, c.node.ID, ComputerTool{NodeID: c.node.ID, Tool: tool, Folder: folder, Program: program, Rung: string(rung), Failed: err != nil})
}

func (s *Service) emitComputer(ctx context.Context, nodeID string, ev ComputerTool) {
	werr := s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(tx *ledger.Tx) error {
		return tx.Emit(KindComputerTool, nodeID, ev)
	})
	if werr != nil {
		s.log.Warn("node: ledger a computer call", "tool", ev.Tool, "err", werr)
	}
}

// runCommand runs computer_run's command; one that goes on in the background wakes the node once
// when it ends, in the same conversation.
func (s *Service) runCommand(ctx context.Context, c *turnCtx, call computer.Call, d computer.Decision, in runIn) (tools.Result, error) {
	t := c.rt.turn
	req := computer.RunRequest{NodeID: c.node.ID, Folder: call.Folder, Command: call.Command, Write: d.Write,
		Timeout: time.Duration(in.Timeout) * time.Second, Background: in.Background}
	if len(in.Secrets) > 0 {
		if s.cfg.SecretEnv == nil {
			return tools.Result{}, errors.New("Saved secrets cannot be used here.")
		}
		env, err := s.cfg.SecretEnv(ctx, in.Secrets, "@"+c.node.Slug)
		if err != nil {
			return tools.Result{}, err
		}
		req.Env = env
	}
	// A known sign-in runs in the background for 15 minutes, whatever the node asked (spec 002
	// §8.16.4), and what it asks of the owner comes on cards in this conversation.
	which := computer.SignInCommand(call.Command)
	if which != "" {
		req.Background, req.Timeout = true, computer.SignInLimit
		s.replaceSignIns(ctx, c.node.ID, which)
	}
	limit := req.Timeout
	if limit <= 0 {
		limit = computer.MaxRunTime
	}
	w := s.watchCommand(t, c.node, call.Command, which, limit)
	req.OnDeviceCode, req.OnBrowserURL, req.Finished, req.Detach = w.deviceCode, w.browserURL, w.finished, w.asked
	req.Ended = func(r computer.Result) {
		if !w.quiet(r) {
			s.commandEnded(t, c.node, r)
		}
	}
	r, err := s.cfg.Computer.Run(ctx, req)
	if err == nil && which != "" && r.Running {
		// Its code or page comes in a second or two: the node hears whether its owner has it.
		timer := time.NewTimer(signInPromptWait)
		select {
		case <-w.asked:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		if again, oerr := s.cfg.Computer.Output(c.node.ID, r.ID, 0); oerr == nil {
			r = again
		}
	}
	res, err := runResult(r, err)
	if err == nil && w.askedOwner() {
		res.Summary += " " + signInNote
	}
	return res, err
}

// commandEnded wakes the node once with a background command's end (operation cmd:<id>).
func (s *Service) commandEnded(t Turn, n Node, r computer.Result) {
	how := fmt.Sprintf("exited %d", r.ExitCode)
	if r.TimedOut {
		how = "reached its time limit"
	}
	out := r.Output
	if len(out) > 4000 {
		out = "…" + out[len(out)-4000:]
	}
	note := fmt.Sprintf("Your background command `%s` (%s) %s after %.0fs. The end of its output:\n%s\n\nTell your owner what came of it, in a line or two, if it matters to them.",
		oneLineOf(r.Command, 200), r.ID, how, r.Seconds, out)
	err := s.cfg.Writer.Exec(s.life, func(tx *ledger.Tx) error {
		return s.enqueueTx(tx, Turn{NodeID: n.ID, RoomID: roomOfLane(t.Lane, t.RoomID), Lane: t.Lane, Private: t.Private,
			Reason: ReasonCommand, ByOwner: t.ByOwner, Depth: t.Depth, OperationID: "cmd:" + r.ID, Note: note, OriginID: t.ID})
	})
	if err != nil {
		s.log.Warn("node: wake for a command's end", "command", r.ID, "err", err)
		return
	}
	s.wake()
}

// ReasonCommand is the turn that hears a background command has ended.
const ReasonCommand = "command"
