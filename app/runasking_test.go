package app

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/needs"
)

func TestInlineQuestions(t *testing.T) {
	open := func(id string) needs.Decision {
		d := needs.NewQuestion(needs.Source{RunID: "job_1"}, "Which one, "+id+"?", []string{"a", "b"}, 1, false)
		d.ID, d.Status = id, needs.Open
		return d
	}
	answered := func(d needs.Decision, by string) needs.Decision {
		d.Status, d.AnsweredBy, d.Answer = needs.Answered, by, &needs.Answer{Option: 0, Text: "a"}
		return d
	}
	const ask = "  Choose (1-2, s to skip, q to quit; 2 is recommended): "
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		do   func(q *inlineQuestions)
		want []string // in this order
		not  []string
	}{{
		name: "settled elsewhere, then the next one",
		do: func(q *inlineQuestions) {
			q.add(open("d1"))
			q.add(open("d2"))
			q.print("  1 Bash ls")
			q.settle(answered(open("d1"), needs.ByPhone))
		},
		want: []string{"Which one, d1?", ask + "\n  1 Bash ls\n" + ask + "\n  Answered “a” (phone).\n", "Which one, d2?", ask},
	}, {
		name: "one not yet asked is settled without a word",
		do: func(q *inlineQuestions) {
			q.add(open("d1"))
			q.add(open("d2"))
			q.settle(answered(open("d2"), needs.ByBrowser))
			q.settle(answered(open("d1"), needs.ByBrowser))
		},
		want: []string{"Which one, d1?", "Answered “a” (browser)."},
		not:  []string{"Which one, d2?"},
	}, {
		name: "q leaves this one, the next is asked",
		do: func(q *inlineQuestions) {
			q.add(open("d1"))
			q.add(open("d2"))
			q.line(ctx, "q\n", false)
		},
		want: []string{"Which one, d1?", "Left for later", "Which one, d2?", ask},
	}, {
		name: "the terminal ended: nothing more is asked here",
		do: func(q *inlineQuestions) {
			q.add(open("d1"))
			q.line(ctx, "", true)
			q.add(open("d2"))
		},
		want: []string{"Which one, d1?", ask + "\n  Left for later", "Which one, d2?", "  2. b  (recommended)\n  Left for later"},
	}} {
		var out bytes.Buffer
		q := &inlineQuestions{out: &out}
		tc.do(q)
		got, rest := out.String(), out.String()
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: lacks %q (in order):\n%s", tc.name, w, got)
				break
			}
			rest = rest[i+len(w):]
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: shows %q:\n%s", tc.name, w, got)
			}
		}
	}
}
