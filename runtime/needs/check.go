package needs

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// Limits on what a card carries, so a runaway agent cannot fill the queue with novels.
const (
	maxText    = 20_000 // a question, a call, a reason or a typed answer, in characters
	maxTitle   = 500
	maxOptions = 20
	maxOption  = 500
	maxWhy     = 500 // the line saying why an option is recommended
)

// prepare checks a decision before it is stored and returns it normalised: text trimmed, a
// permission's options fixed and its recommendation Refuse unless one was chosen.
func prepare(d Decision) (Decision, error) {
	d.Source.Title = strings.TrimSpace(d.Source.Title)
	if n := utf8.RuneCountInString(d.Source.Title); n > maxTitle {
		return d, problem.Invalid("The title is %d characters long; keep it under %d.", n, maxTitle)
	}
	switch d.Kind {
	case Permission:
		d.Call = strings.TrimSpace(d.Call)
		d.Reason = strings.TrimSpace(d.Reason)
		if d.Call == "" {
			return d, problem.Invalid("A permission needs the tool call it asks about.")
		}
		if err := tooLong("The tool call", d.Call); err != nil {
			return d, err
		}
		if err := tooLong("The reason", d.Reason); err != nil {
			return d, err
		}
		d.Question = ""
		d.Options = slices.Clone(PermissionOptions)
		d.FreeText = false
		if !d.recommendSet {
			d.Recommended = Refuse
		}
	case Question:
		d.Question = strings.TrimSpace(d.Question)
		if d.Question == "" {
			return d, problem.Invalid("A question needs its text.")
		}
		if err := tooLong("The question", d.Question); err != nil {
			return d, err
		}
		d.Call, d.Reason, d.Touches = "", "", judge.Touches{}
		opts := make([]string, len(d.Options))
		for i, o := range d.Options {
			o = strings.TrimSpace(o)
			switch {
			case o == "":
				return d, problem.Invalid("Option %d is empty.", i)
			case utf8.RuneCountInString(o) > maxOption:
				return d, problem.Invalid("Option %d is longer than %d characters.", i, maxOption)
			case isNumber(o):
				// A label that is a number would be read as an option's index at the terminal.
				return d, problem.Invalid("Option %d (%q) is only a number; give it words.", i, o)
			}
			for j := range i {
				if strings.EqualFold(opts[j], o) {
					return d, problem.Invalid("Options %d and %d are the same: %q.", j, i, o)
				}
			}
			opts[i] = o
		}
		d.Options = opts
		switch {
		case len(opts) > maxOptions:
			return d, problem.Invalid("A question has %d options; offer at most %d.", len(opts), maxOptions)
		case len(opts) == 0 && !d.FreeText:
			return d, problem.Invalid("A question needs options, or free text allowed.")
		case len(opts) == 0:
			d.Recommended = NoRecommendation
		}
	default:
		return d, problem.Invalid("Unknown kind of decision %q: it is a permission or a question.", d.Kind)
	}
	// An agent's question may come without a recommendation; a permission always has one.
	if len(d.Options) > 0 && d.Recommended != NoRecommendation && (d.Recommended < 0 || d.Recommended >= len(d.Options)) {
		return d, problem.Invalid("The recommended option %d is not one of the %d options.", d.Recommended, len(d.Options))
	}
	d.Why = strings.TrimSpace(d.Why)
	if d.Recommended == NoRecommendation {
		d.Why = ""
	}
	if n := utf8.RuneCountInString(d.Why); n > maxWhy {
		return d, problem.Invalid("The line saying why is %d characters long; keep it under %d.", n, maxWhy)
	}
	d.Status = Open
	d.Answer, d.AnsweredBy, d.AnsweredAt, d.ClosedAt = nil, "", nil, nil
	return d, nil
}

func tooLong(what, s string) error {
	if n := utf8.RuneCountInString(s); n > maxText {
		return problem.Invalid("%s is %d characters long; keep it under %d.", what, n, maxText)
	}
	return nil
}

func isNumber(s string) bool {
	var n int
	_, err := fmt.Sscan(s, &n)
	return err == nil && fmt.Sprint(n) == s
}

// resolve checks an answer against the decision and returns it complete: a chosen option with its
// label, or typed text. Typed text equal to an option's label (any case) chooses that option.
func (d Decision) resolve(a Answer) (Answer, error) {
	if a.Option < FreeText {
		return a, problem.Invalid("Option %d does not exist: options are numbered from 0.", a.Option)
	}
	if a.Option == FreeText {
		text := strings.TrimSpace(a.Text)
		if text == "" {
			return a, problem.Invalid("The answer is empty: choose an option or type an answer.")
		}
		if i := slices.IndexFunc(d.Options, func(o string) bool { return strings.EqualFold(o, text) }); i >= 0 {
			return Answer{Option: i, Text: d.Options[i]}, nil
		}
		if !d.FreeText {
			return a, problem.Invalid("This %s takes one of its options, not free text: %s.", d.Kind, optionList(d.Options))
		}
		if err := tooLong("The answer", text); err != nil {
			return a, err
		}
		return Answer{Option: FreeText, Text: text}, nil
	}
	if len(d.Options) == 0 {
		return a, problem.Invalid("This question has no options; type an answer instead.")
	}
	if a.Option >= len(d.Options) {
		return a, problem.Invalid("Option %d does not exist: choose a number from 0 to %d (%s).", a.Option, len(d.Options)-1, optionList(d.Options))
	}
	return Answer{Option: a.Option, Text: d.Options[a.Option]}, nil
}

// optionList is the options as a person reads them: 0 “Allow once”, 1 “Refuse”.
func optionList(opts []string) string {
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = fmt.Sprintf("%d “%s”", i, o)
	}
	return strings.Join(parts, ", ")
}

// unattended is the answer a run in Run unattended gives itself: the recommended option, or for a
// question that only takes free text, a note that no one is there to answer.
func (d Decision) unattended() Answer {
	if d.Recommended >= 0 && d.Recommended < len(d.Options) {
		return Answer{Option: d.Recommended, Text: d.Options[d.Recommended]}
	}
	return Answer{Option: FreeText, Text: unattendedText}
}

// unattendedText answers a free-text question in a run no one watches.
const unattendedText = "No one is watching this run (Run unattended), so there is no answer: decide for yourself and say what you chose in your report."

// AnsweredPhrase says who answered d, when, and what, to sit inside a sentence: "by phone at
// 10:02:03 on 3 Jan 2026 (“Apply”)". It is "" for a decision that is not answered.
func (d Decision) AnsweredPhrase() string {
	if d.Status != Answered {
		return ""
	}
	p := fmt.Sprintf("by %s at %s", answererPhrase(d.AnsweredBy), sayTime(d.AnsweredAt, time.Local))
	if d.Answer != nil {
		p += " (“" + d.Answer.Text + "”)"
	}
	return p
}

// sayTime says a time for a sentence, in loc.
func sayTime(t *time.Time, loc *time.Location) string {
	if t == nil {
		return "an unknown time"
	}
	return t.In(loc).Format("15:04:05 on 2 Jan 2006")
}

// settledSentence says how a decision that is no longer open was settled, with times in loc.
func settledSentence(d Decision, loc *time.Location) string {
	at := func(t *time.Time) string { return sayTime(t, loc) }
	switch d.Status {
	case Answered:
		answer := ""
		if d.Answer != nil {
			answer = ": “" + d.Answer.Text + "”"
		}
		if d.AnsweredBy == ByUnattended {
			return fmt.Sprintf("Already answered at %s%s, the recommended option, because the run is unattended.", at(d.AnsweredAt), answer)
		}
		return fmt.Sprintf("Already answered by %s at %s%s.", answererPhrase(d.AnsweredBy), at(d.AnsweredAt), answer)
	case Withdrawn:
		return fmt.Sprintf("Already withdrawn at %s: its run ended, so no one waits for the answer.", at(d.ClosedAt))
	case Expired:
		return fmt.Sprintf("Already expired at %s: no one waits for the answer any more.", at(d.ClosedAt))
	}
	return "This decision is still open."
}

// answererPhrase names who answered, for a sentence.
func answererPhrase(by string) string {
	switch by {
	case ByBrowser:
		return "you in the browser"
	case ByCommandLine:
		return "you at the command line"
	case ByChat:
		return "you in the assistant's chat"
	case "":
		return "someone"
	}
	return by
}
