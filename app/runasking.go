package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ensemblework/ensemble/runtime/needs"
)

// inlineQuestions are the open Needs me decisions of the run `ensemble run` follows, asked one at a
// time at the terminal while the trace goes on printing. A decision settled elsewhere (the window, a
// phone, `ensemble needs answer`) takes its prompt away with a line saying how it was answered.
type inlineQuestions struct {
	c   *client
	out io.Writer

	queue    []needs.Decision // open, oldest first; queue[0] is the one asked
	prompted bool             // the prompt is the last thing printed, on a line of its own
	noInput  bool             // the terminal ended: nothing more is asked here
}

// add takes a decision of the run that was just created, and asks it when it is the first.
func (q *inlineQuestions) add(d needs.Decision) {
	for _, o := range q.queue {
		if o.ID == d.ID {
			return
		}
	}
	q.queue = append(q.queue, d)
	if len(q.queue) == 1 {
		q.askNext()
	}
}

// asking says whether a prompt waits for a line.
func (q *inlineQuestions) asking() bool { return len(q.queue) > 0 && !q.noInput }

// settle takes a decision away that was answered, withdrawn or expired elsewhere.
func (q *inlineQuestions) settle(d needs.Decision) {
	for i, o := range q.queue {
		if o.ID != d.ID {
			continue
		}
		q.queue = append(q.queue[:i:i], q.queue[i+1:]...)
		if i == 0 {
			q.breakLine()
			fmt.Fprintf(q.out, "  %s.\n", settledLine(d))
			q.askNext()
		}
		return
	}
}

// line acts on a line typed at the prompt; end is true when the terminal ended instead.
func (q *inlineQuestions) line(ctx context.Context, line string, end bool) error {
	if !q.asking() {
		return nil
	}
	if end {
		q.stopAsking()
		return nil
	}
	q.prompted = false // the terminal echoed the line's newline
	r, err := answerLine(ctx, q.c, q.out, q.queue[0], line)
	switch {
	case err != nil:
		return err
	case r == quitAsking:
		// This one waits on Needs me; the run's next question is asked here again.
		fmt.Fprintln(q.out, "  Left for later: answer it in the window or with 'ensemble needs'.")
		q.queue = q.queue[1:]
		q.askNext()
	case r == reprompt:
		fmt.Fprint(q.out, prompt(q.queue[0]))
		q.prompted = true
	default:
		q.queue = q.queue[1:]
		q.askNext()
	}
	return nil
}

// stopAsking leaves this and every later question for the window or `ensemble needs`: the
// terminal has ended.
func (q *inlineQuestions) stopAsking() {
	q.breakLine()
	q.noInput = true
	fmt.Fprintln(q.out, "  Left for later: answer it in the window or with 'ensemble needs'.")
	q.queue = q.queue[1:]
	q.askNext()
}

// askNext shows the first decision in the queue and its prompt; once the terminal has ended, it
// shows each one as left for later.
func (q *inlineQuestions) askNext() {
	for len(q.queue) > 0 {
		q.breakLine()
		fmt.Fprintln(q.out)
		printDecision(q.out, q.queue[0])
		if !q.noInput {
			fmt.Fprint(q.out, prompt(q.queue[0]))
			q.prompted = true
			return
		}
		fmt.Fprintln(q.out, "  Left for later: answer it in the window or with 'ensemble needs'.")
		q.queue = q.queue[1:]
	}
}

// print writes a line of the trace; one that comes while the prompt waits goes above it, and the
// prompt is shown again under it.
func (q *inlineQuestions) print(line string) {
	if !q.prompted {
		fmt.Fprintln(q.out, line)
		return
	}
	fmt.Fprintln(q.out)
	fmt.Fprintln(q.out, line)
	fmt.Fprint(q.out, prompt(q.queue[0]))
}

// breakLine ends the prompt's line, so what follows starts on a line of its own.
func (q *inlineQuestions) breakLine() {
	if q.prompted {
		fmt.Fprintln(q.out)
		q.prompted = false
	}
}

// typedLine is one line read from the terminal, or its end.
type typedLine struct {
	text string
	end  bool
}

// readLines sends the terminal's lines on ch, one at a time as they are taken, then its end.
func readLines(ctx context.Context, rd *bufio.Reader, ch chan<- typedLine) {
	for {
		s, err := rd.ReadString('\n')
		end := err != nil && (!errors.Is(err, io.EOF) || s == "")
		select {
		case ch <- typedLine{text: s, end: end}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			if !end { // a last line without a newline, then the end
				select {
				case ch <- typedLine{end: true}:
				case <-ctx.Done():
				}
			}
			return
		}
	}
}
