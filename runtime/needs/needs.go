// Package needs is Needs me: the one durable queue of decisions a run has for the person, answered
// once from wherever the person is (the window, a phone, the terminal).
//
// A decision is a permission (a tool call the judge asked about: allow once, allow for this run or
// refuse) or a question (text, options, the recommended one, and whether free text is allowed). It is
// stored in SQLite before anyone is told, and it settles exactly once: answered, withdrawn (its run
// ended) or expired (no one waits for the answer any more). Settling is a compare-and-set on the open
// status in SQL, so when two clients answer together the first wins and the second is told who
// answered and when ([SettledError]).
//
// # Events
//
// Every change appends an event in the transaction that makes it, published after the commit:
// needs.created, needs.answered, needs.withdrawn and needs.expired. Each carries the whole
// [Decision], so every client sees it appear and settle live.
//
// # Waiting
//
// [Service.Ask] creates a decision and blocks until it settles or its context ends; an ended context
// expires the decision. A run in Run unattended passes [Unattended]: the recommended option is
// answered at once, recorded as answered by [ByUnattended].
package needs

import (
	"errors"
	"time"

	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// Kind is what a decision asks for.
type Kind string

const (
	Permission Kind = "permission" // may this tool call run?
	Question   Kind = "question"   // an agent's question, with options
)

// Status is where a decision is in its life. Only Open changes, and only once.
type Status string

const (
	Open      Status = "open"
	Answered  Status = "answered"
	Withdrawn Status = "withdrawn" // its run ended
	Expired   Status = "expired"   // no one waits for the answer any more
)

// Who answered: the client the person answered through, or the run's mode for automatic answers.
const (
	ByBrowser     = "browser"
	ByPhone       = "phone" // a paired phone, through the relay
	ByCommandLine = "command line"
	ByUnattended  = "run unattended"
	// ByChat is Apply or Discard in the assistant's chat, for a held write that also waits here.
	ByChat = "assistant chat"
)

// The options of every permission, in this order.
const (
	AllowOnce   = 0
	AllowForRun = 1
	Refuse      = 2
)

// PermissionOptions are the labels of a permission's options.
var PermissionOptions = []string{"Allow once", "Allow for this run", "Refuse"}

// FreeText is the option index of an answer typed as free text.
const FreeText = -1

// NoRecommendation is the recommended index of a question without options, or whose asker
// recommends none of them.
const NoRecommendation = -1

// Source is where a decision comes from: the run and a title a person recognises (the task's).
type Source struct {
	RunID string `json:"runId,omitempty"`
	Title string `json:"title"`
}

// Decision is one card on Needs me.
type Decision struct {
	ID     string `json:"id"`
	Kind   Kind   `json:"kind"`
	Source Source `json:"source"`

	// A question's text.
	Question string `json:"question,omitempty"`

	// A permission: the tool call as text, what it would touch, and why the judge asks.
	Call    string        `json:"call,omitempty"`
	Touches judge.Touches `json:"touches,omitzero"`
	Reason  string        `json:"reason,omitempty"`

	// Options are the answers offered; Recommended is the index of the one Ensemble suggests
	// ([NoRecommendation] when there are none). A permission's options are [PermissionOptions] and
	// its recommendation is [Refuse] unless set with [Decision.Recommend].
	Options     []string `json:"options"`
	Recommended int      `json:"recommended"`
	// Why is one line saying why the recommended option is the careful choice ("It changes only
	// files in the run's own folder."); empty when nothing is recommended.
	Why      string `json:"why,omitempty"`
	FreeText bool   `json:"freeText"`

	// SignIn is a run's question that is a sign-in or a human check in one of its tabs, which the
	// person can do from here (the tab's clean browser, from the window or the phone).
	SignIn *SignIn `json:"signIn,omitempty"`

	Created    time.Time  `json:"created"`
	Status     Status     `json:"status"`
	Answer     *Answer    `json:"answer,omitempty"`
	AnsweredBy string     `json:"answeredBy,omitempty"`
	AnsweredAt *time.Time `json:"answeredAt,omitempty"`
	// ClosedAt is when a decision was withdrawn or expired.
	ClosedAt *time.Time `json:"closedAt,omitempty"`

	recommendSet bool // a permission's recommendation was chosen, not left at the zero value
}

// SignIn is the tab a run's sign-in waits in.
type SignIn struct {
	Tab     string `json:"tab"`
	Site    string `json:"site"`
	Purpose string `json:"purpose"` // sign_in or human_check
}

// Answer is the answer to a decision: an option's index and its label, or [FreeText] and the text.
type Answer struct {
	Option int    `json:"option"`
	Text   string `json:"text"`
}

// Choose is the answer choosing option i.
func Choose(i int) Answer { return Answer{Option: i} }

// Say is an answer typed as free text. Text equal to an option's label chooses that option.
func Say(text string) Answer { return Answer{Option: FreeText, Text: text} }

// NewPermission is a permission card for a tool call the judge asked about. Its recommendation is
// Refuse; change it with [Decision.Recommend].
func NewPermission(src Source, call string, touches judge.Touches, reason string) Decision {
	return Decision{Kind: Permission, Source: src, Call: call, Touches: touches, Reason: reason,
		Options: PermissionOptions, Recommended: Refuse, recommendSet: true}
}

// NewQuestion is a question card. recommended is an index into options, or [NoRecommendation]
// when there are none.
func NewQuestion(src Source, text string, options []string, recommended int, freeText bool) Decision {
	return Decision{Kind: Question, Source: src, Question: text, Options: options,
		Recommended: recommended, FreeText: freeText}
}

// Recommend sets the recommended option and the line that says why.
func (d Decision) Recommend(i int, why string) Decision {
	d.Recommended = i
	d.Why = why
	d.recommendSet = true
	return d
}

// Title is what the card asks, in a line: the question, or the call.
func (d Decision) Title() string {
	if d.Kind == Permission {
		return d.Call
	}
	return d.Question
}

// ErrSettled is matched (errors.Is) by the error of answering a decision that is no longer open.
var ErrSettled = errors.New("needs: decision already settled")

// SettledError says a decision was settled before this answer: who answered and when, or when it
// was withdrawn or expired.
type SettledError struct{ Decision Decision }

func (e *SettledError) Error() string        { return settledSentence(e.Decision, time.Local) }
func (e *SettledError) Is(target error) bool { return target == ErrSettled }

// Kind makes a late answer a conflict: the decision's state no longer takes one.
func (e *SettledError) Kind() problem.Kind { return problem.KindConflict }

// notFound says there is no decision with the id.
func notFound(id string) error {
	return problem.NotFound("There is no decision %q on Needs me.", id)
}
