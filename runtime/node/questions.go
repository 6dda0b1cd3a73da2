package node

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The agent's questions (spec 002 §8.11). A question an agent asks in a run a node started goes
// to that node first, in the run's lane, unless its owner keeps them (autonomy.answerAgentQuestions:
// ask). The node may answer only with words quoted exactly from what its owner asked, the
// mission, the step or the constraints; questions of permission, scope, security, cost or
// anything destructive never reach it, and whatever it leaves waits for the owner on Needs me.
const (
	ToolAnswerQuestion = "node_answer_question"
	ReasonQuestion     = "question"
)

func init() { actingTools[ToolAnswerQuestion] = true }

// The sources a node may quote.
const (
	SourceOwner       = "owner"
	SourceMission     = "mission"
	SourceStep        = "step"
	SourceConstraints = "constraints"
)

type answerQuestionIn struct {
	Decision string `json:"decision" jsonschema:"the question's id (dec_…)" check:"minLength=1,maxLength=100"`
	Answer   string `json:"answer" jsonschema:"the answer; for a question with options, one option word for word" check:"minLength=1,maxLength=2000"`
	Quote    string `json:"quote" jsonschema:"the words that answer it, copied exactly from the source" check:"minLength=3,maxLength=2000"`
	Source   string `json:"source" jsonschema:"where the quote is: owner (their message), mission (its goal and requirements), step (its brief) or constraints" check:"enum=owner|mission|step|constraints"`
}

var refusalClasses = []struct {
	class string
	re    *regexp.Regexp
}{
	{"permission", regexp.MustCompile(`(?i)\b(permissions?|allow(ed)?|approve|grant|sudo|root|access|credentials?|passwords?|tokens?|api keys?|secrets?|log ?in|sign ?in)\b`)},
	{"scope", regexp.MustCompile(`(?i)\b(scope|beyond|outside (the|this|of)|as well as|other (files|folders|repos|repositories|projects|services)|expand|widen|more than asked)\b`)},
	{"security", regexp.MustCompile(`(?i)\b(security|insecure|vulnerab\w*|disable (the )?(checks?|auth\w*|ssl|tls|verification|sandbox)|firewall|encrypt\w*|certificates?|--no-verify)\b`)},
	{"cost", regexp.MustCompile(`(?i)(\b(cost|costs|pay|paid|price|pricing|billing|budget|purchase|buy|subscriptions?|charges?|spend)\b|[$€£]\s?\d)`)},
	{"destructive", regexp.MustCompile(`(?i)(\b(delete|deleting|remove|removing|drop|truncate|wipe|erase|overwrite|destroy|irreversibl\w*|permanently|force[- ]push|discard)\b|rm -rf|reset --hard|push --force)`)},
}

// questionRefusal is the kind of question only the owner answers, "" when a node may.
func questionRefusal(text string) string {
	for _, c := range refusalClasses {
		if c.re.MatchString(text) {
			return c.class
		}
	}
	return ""
}

// questionWork is where an agent's question came from: the node whose run asked, the turn it
// wakes, and the sources it may quote.
type questionWork struct {
	node    Node
	turn    Turn
	sources map[string]string
}

// workOfRun finds the node work a run belongs to: a session run a node started for its owner,
// or a plan step's attempt. ok is false for a run no node manages.
func (s *Service) workOfRun(ctx context.Context, jobID string) (questionWork, bool, error) {
	db := s.cfg.Store.Reader()
	if rs, err := s.queryRuns(ctx, db, "WHERE job_id = ?", jobID); err != nil {
		return questionWork{}, false, err
	} else if len(rs) == 1 {
		r := rs[0]
		if !r.ByOwner {
			return questionWork{}, false, nil
		}
		n, err := s.Node(ctx, r.NodeID)
		if err != nil {
			return questionWork{}, false, nil
		}
		owner, err := s.ownerWords(ctx, r.RoomID, store.Stamp(r.CreatedAt))
		if err != nil {
			return questionWork{}, false, err
		}
		return questionWork{node: n, sources: map[string]string{SourceOwner: owner},
			turn: Turn{NodeID: n.ID, RoomID: r.RoomID, Lane: r.Lane, Private: r.Private}}, true, nil
	}
	var mission, step string
	err := db.QueryRowContext(ctx, "SELECT mission_id, step_id FROM node_attempts WHERE job_id = ? AND outcome = 'unknown'", jobID).Scan(&mission, &step)
	if errors.Is(err, sql.ErrNoRows) {
		return questionWork{}, false, nil
	}
	if err != nil {
		return questionWork{}, false, err
	}
	m, err := s.Mission(ctx, mission)
	if err != nil {
		return questionWork{}, false, nil
	}
	st := m.step(step)
	var byOwner bool
	var created string
	_ = db.QueryRowContext(ctx, "SELECT by_owner, created_at FROM node_missions WHERE id = ?", mission).Scan(&byOwner, &created)
	if st == nil || !byOwner {
		return questionWork{}, false, nil
	}
	n, err := s.Node(ctx, st.NodeID)
	if err != nil {
		return questionWork{}, false, nil
	}
	owner, err := s.ownerWords(ctx, m.RoomID, created)
	if err != nil {
		return questionWork{}, false, err
	}
	return questionWork{node: n, sources: map[string]string{SourceOwner: owner, SourceMission: missionWords(m),
		SourceStep: st.Brief, SourceConstraints: constraintLines(m.Contract.Constraints)},
		turn: Turn{NodeID: n.ID, RoomID: m.RoomID, Lane: "work:" + m.ID + ":" + st.ID + ":" + n.ID, ConversationID: st.ConversationID}}, true, nil
}

// ownerWords are the owner's last messages in the room up to when the work started: what they
// asked for, in their words (their private ones too: only they and their nodes read either).
func (s *Service) ownerWords(ctx context.Context, roomID, before string) (string, error) {
	bodies, err := queryAll(ctx, s.cfg.Store.Reader(), "read the owner's words",
		"SELECT body FROM node_messages WHERE room_id = ? AND author = 'person' AND created_at <= ? AND deleted = 0 ORDER BY seq DESC LIMIT 5",
		[]any{roomID, before}, scanString)
	if err != nil {
		return "", err
	}
	for i, j := 0, len(bodies)-1; i < j; i, j = i+1, j-1 {
		bodies[i], bodies[j] = bodies[j], bodies[i]
	}
	return strings.Join(bodies, "\n\n"), nil
}

// missionWords are a mission's goal and requirements with their acceptance criteria.
func missionWords(m Mission) string {
	var b strings.Builder
	b.WriteString(m.Goal)
	for _, r := range m.Contract.Requirements {
		fmt.Fprintf(&b, "\n%s: %s", r.ID, r.Text)
		for _, a := range r.Acceptance {
			fmt.Fprintf(&b, "\n- %s", a.Text)
		}
	}
	return b.String()
}

// questionAsked hands a new question to the node whose run asked it, as one turn.
func (s *Service) questionAsked(ctx context.Context, d needs.Decision) {
	if d.Kind != needs.Question || d.Status != needs.Open || d.Source.RunID == "" || questionRefusal(d.Question) != "" {
		return
	}
	w, ok, err := s.workOfRun(ctx, d.Source.RunID)
	if err != nil {
		s.log.Warn("node: an agent's question", "decision", d.ID, "err", err)
		return
	}
	if !ok || w.node.Paused() || w.node.Autonomy.AnswerAgentQuestions == "ask" {
		return
	}
	t := w.turn
	t.Reason, t.ByOwner, t.Depth, t.OperationID, t.Note = ReasonQuestion, true, 1, "question:"+d.ID, questionNote(d, w.sources)
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error { return s.enqueueTx(tx, t) })
	if err != nil {
		s.log.Warn("node: hand an agent's question to its node", "decision", d.ID, "err", err)
		return
	}
	s.wake()
}

// catchUpQuestions hands on open questions no node heard (the bus dropped them, Ensemble was down);
// a question already handed on is not handed on again (its operation id).
func (s *Service) catchUpQuestions(ctx context.Context) {
	open, err := needs.OpenDecisions(ctx, s.cfg.Store.Reader(), 100)
	if err != nil {
		return
	}
	for _, d := range open {
		s.questionAsked(ctx, d)
	}
}

func questionNote(d needs.Decision, sources map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The coding agent working on “%s” asks (question %s):\n%s\n", d.Source.Title, d.ID, d.Question)
	if len(d.Options) > 0 {
		fmt.Fprintf(&b, "Options: %s\n", strings.Join(d.Options, " | "))
	}
	b.WriteString("\nAnswer it with node_answer_question only if one of these says the answer in so many words; quote those words exactly. " +
		"Your own words to the agent are not a source. Otherwise do nothing: it waits for your owner. Do not post about it.\n")
	for _, k := range []string{SourceOwner, SourceMission, SourceStep, SourceConstraints} {
		if v := strings.TrimSpace(sources[k]); v != "" {
			fmt.Fprintf(&b, "\n[%s]\n%s\n", k, v)
		}
	}
	return b.String()
}

// answerQuestion is node_answer_question.
func (s *Service) answerQuestion(ctx context.Context, c *turnCtx, in answerQuestionIn) (tools.Result, error) {
	if s.cfg.Needs == nil {
		return tools.Result{}, errors.New("Questions are not answered here.")
	}
	d, err := s.openQuestion(ctx, in.Decision)
	if err != nil {
		return tools.Result{}, err
	}
	w, ok, err := s.workOfRun(ctx, d.Source.RunID)
	if err != nil {
		return tools.Result{}, err
	}
	if !ok || w.node.ID != c.node.ID {
		return tools.Result{}, problem.NotFound("There is no question %q from your work.", in.Decision)
	}
	if class := questionRefusal(d.Question); class != "" {
		return tools.Result{}, problem.Conflict("This question is about %s, which only your owner answers; leave it for them.", class)
	}
	if !quoted(w.sources[in.Source], in.Quote) {
		return tools.Result{}, problem.Invalid("The quote is not word for word in the %s source; answer only from words there, or leave the question for your owner.", in.Source)
	}
	a, err := answerOf(d, in.Answer)
	if err != nil {
		return tools.Result{}, err
	}
	by := fmt.Sprintf("@%s, from %s", c.node.Slug, sourcePhrase(in.Source))
	if _, err := s.cfg.Needs.Answer(ctx, d.ID, a, by); err != nil {
		return tools.Result{}, err
	}
	if rs, err := s.queryRuns(ctx, s.cfg.Store.Reader(), "WHERE job_id = ?", d.Source.RunID); err == nil && len(rs) == 1 {
		detail, _ := json.Marshal(map[string]string{"decision": d.ID, "source": in.Source, "quote": in.Quote, "answer": in.Answer})
		_ = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
			return sessionEventTx(tx, rs[0].Root, c.node.ID, "answer", origin{who: "node", source: "question"}, d.Source.RunID, string(detail))
		})
	}
	return tools.Result{Summary: fmt.Sprintf("Answered the agent: “%s” (from %s).", oneLineOf(in.Answer, 120), sourcePhrase(in.Source))}, nil
}

// openQuestion is an open agent question by id.
func (s *Service) openQuestion(ctx context.Context, id string) (needs.Decision, error) {
	d, err := s.cfg.Needs.Get(ctx, id)
	if err != nil || d.Kind != needs.Question || d.Status != needs.Open {
		return needs.Decision{}, problem.Conflict("The question %q is not open: it was answered, or its run ended.", id)
	}
	return d, nil
}

// quoted reports whether quote is in source word for word, letter case and spacing aside.
func quoted(source, quote string) bool {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	q := norm(strings.Trim(quote, " \"'“”‘’"))
	return len(q) >= 3 && strings.Contains(norm(source), q)
}

// answerOf is the node's answer as the question takes it: one of its options, or free text.
func answerOf(d needs.Decision, text string) (needs.Answer, error) {
	for i, o := range d.Options {
		if strings.EqualFold(strings.TrimSpace(o), strings.TrimSpace(text)) {
			return needs.Choose(i), nil
		}
	}
	if len(d.Options) > 0 && !d.FreeText {
		return needs.Answer{}, problem.Invalid("The question takes one of its options: %s.", strings.Join(d.Options, ", "))
	}
	return needs.Say(text), nil
}

func sourcePhrase(source string) string {
	switch source {
	case SourceOwner:
		return "its owner's message"
	case SourceMission:
		return "the mission"
	case SourceStep:
		return "the step's brief"
	}
	return "the mission's constraints"
}

func answerQuestionTool(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolAnswerQuestion, "Answer a question a coding agent of yours asked, only from words quoted exactly from your owner's message, the mission, the step or its constraints. Anything else waits for your owner."),
		tools.Typed[answerQuestionIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in answerQuestionIn) (tools.Result, error) {
			c, err := turnOf(tc)
			if err != nil {
				return tools.Result{}, err
			}
			return c.s.answerQuestion(ctx, c, in)
		}})
}
