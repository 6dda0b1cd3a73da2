package problem

import (
	"errors"
	"fmt"
	"testing"
)

type moveError struct{ allowed []string }

func (e *moveError) Error() string { return "A done task cannot move there." }
func (e *moveError) Kind() Kind    { return KindConflict }

func TestKindAndSentence(t *testing.T) {
	sentinel := NotFound("There is no key %q.", "k1")
	for _, c := range []struct {
		name     string
		err      error
		kind     Kind
		sentence string
	}{
		{"nil", nil, KindNone, ""},
		{"plain", errors.New("disk full"), KindNone, ""},
		{"invalid", Invalid("The name %s is too long.", "x"), KindInvalid, "The name x is too long."},
		{"not found", NotFound("There is no run %q.", "r1"), KindNotFound, `There is no run "r1".`},
		{"conflict", Conflict("The run has ended."), KindConflict, "The run has ended."},
		{"forbidden", Forbidden("This key may not write."), KindForbidden, "This key may not write."},
		{"too many", TooMany("Too many tries; wait a minute."), KindTooMany, "Too many tries; wait a minute."},
		{"unavailable", Unavailable("No model is set up."), KindUnavailable, "No model is set up."},
		{"new keeps %", New(KindInvalid, "100% is too much."), KindInvalid, "100% is too much."},
		{"wrapped keeps the kind and the sentence", fmt.Errorf("save profile: %w", Conflict("The name is taken.")), KindConflict, "The name is taken."},
		{"twice wrapped", fmt.Errorf("a: %w", fmt.Errorf("b: %w", sentinel)), KindNotFound, `There is no key "k1".`},
		{"a domain type", fmt.Errorf("move: %w", &moveError{}), KindConflict, "A done task cannot move there."},
		{"joined: the first problem", errors.Join(errors.New("log"), Invalid("Say a name.")), KindInvalid, "Say a name."},
	} {
		t.Run(c.name, func(t *testing.T) {
			if k := KindOf(c.err); k != c.kind {
				t.Errorf("KindOf = %v, want %v", k, c.kind)
			}
			if s := Sentence(c.err); s != c.sentence {
				t.Errorf("Sentence = %q, want %q", s, c.sentence)
			}
			if c.kind != KindNone && !Is(c.err, c.kind) {
				t.Errorf("Is(err, %v) = false", c.kind)
			}
		})
	}
}

// A sentinel declared as a problem keeps errors.Is through wrapping.
func TestSentinel(t *testing.T) {
	errUnknown := Forbidden("That key is not one this Ensemble made.")
	err := fmt.Errorf("check key: %w", errUnknown)
	if !errors.Is(err, errUnknown) {
		t.Error("errors.Is lost the sentinel")
	}
	if errors.Is(err, Forbidden("That key is not one this Ensemble made.")) {
		t.Error("two problems with one sentence are not the same sentinel")
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind() != KindForbidden {
		t.Errorf("errors.As *Error: %v", pe)
	}
}

func TestKindString(t *testing.T) {
	if s := KindNotFound.String(); s != "not found" {
		t.Errorf("%q", s)
	}
	if s := Kind(99).String(); s != "Kind(99)" {
		t.Errorf("%q", s)
	}
}
