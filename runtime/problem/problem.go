// Package problem is the errors a person reads: a [Kind] (invalid, not found, conflict,
// forbidden, too many, unavailable) and one sentence that says what is wrong and what to do, in
// the spirit of Tailscale's vizerror. A domain package returns one where a person (or a model
// acting for one) can act on the answer; the local API maps the kind to an HTTP status in one
// place and shows the sentence as it is. Any other error is a failure inside Ensemble: it is
// logged, and the person is told only that something went wrong.
//
// Wrapping keeps the kind: [KindOf] and [Sentence] look through fmt.Errorf's %w, so a caller may
// add context for the log without changing what the person reads.
//
// The package imports nothing of the project, so every domain package can use it.
package problem

import (
	"errors"
	"fmt"
)

// Kind says what sort of problem a person has to act on.
type Kind uint8

const (
	// KindNone is an error that carries no problem: a failure inside Ensemble.
	KindNone Kind = iota
	// KindInvalid is input the person must correct (400).
	KindInvalid
	// KindNotFound is a thing that does not exist, or no longer does (404).
	KindNotFound
	// KindConflict is an action the thing's state does not allow now (409).
	KindConflict
	// KindForbidden is an action this caller may not take (403).
	KindForbidden
	// KindTooMany is a limit reached: wait, or close something first (429).
	KindTooMany
	// KindUnavailable is something Ensemble cannot do here or now (503).
	KindUnavailable
)

var kindNames = [...]string{"none", "invalid", "not found", "conflict", "forbidden", "too many", "unavailable"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Kinded is an error that carries a problem. [*Error] is one; a domain error with more to say
// than one sentence (the moves a task may make, the row an undo found changed) implements it too.
type Kinded interface {
	error
	Kind() Kind
}

// Error is a problem: its kind and the sentence to show.
type Error struct {
	kind Kind
	msg  string
}

func (e *Error) Error() string { return e.msg }

// Kind says what sort of problem e is.
func (e *Error) Kind() Kind { return e.kind }

// New is a problem of kind k saying msg as it is.
func New(k Kind, msg string) error { return &Error{kind: k, msg: msg} }

// Invalid is input the person must correct, with the sentence that says how.
func Invalid(format string, args ...any) error { return newf(KindInvalid, format, args) }

// NotFound is a thing that does not exist.
func NotFound(format string, args ...any) error { return newf(KindNotFound, format, args) }

// Conflict is an action the thing's state does not allow now.
func Conflict(format string, args ...any) error { return newf(KindConflict, format, args) }

// Forbidden is an action this caller may not take.
func Forbidden(format string, args ...any) error { return newf(KindForbidden, format, args) }

// TooMany is a limit reached.
func TooMany(format string, args ...any) error { return newf(KindTooMany, format, args) }

// Unavailable is something that cannot be done here or now.
func Unavailable(format string, args ...any) error { return newf(KindUnavailable, format, args) }

func newf(k Kind, format string, args []any) error {
	return &Error{kind: k, msg: fmt.Sprintf(format, args...)}
}

// As finds the problem err carries, looking through wrapping.
func As(err error) (Kinded, bool) {
	var k Kinded
	if err == nil || !errors.As(err, &k) {
		return nil, false
	}
	return k, true
}

// KindOf is the kind of the problem err carries; KindNone when it carries none (or err is nil).
func KindOf(err error) Kind {
	if k, ok := As(err); ok {
		return k.Kind()
	}
	return KindNone
}

// Is reports whether err carries a problem of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// Sentence is what a person reads for err: the sentence of the problem it carries, without the
// context wrapped around it for the log; "" when it carries none.
func Sentence(err error) string {
	if k, ok := As(err); ok {
		return k.Error()
	}
	return ""
}
