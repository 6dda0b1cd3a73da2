package secrets

import (
	"context"
	"log/slog"
)

// HidingHandler passes records on to h with every known value hidden: in the message, in string
// attributes and in errors and other values as they would print. A log line that quotes a command,
// an agent's output or an error is then as safe as a trace.
func HidingHandler(h slog.Handler, d *Redactor) slog.Handler {
	return &hidingHandler{h: h, d: d}
}

type hidingHandler struct {
	h slog.Handler
	d *Redactor
}

func (hh *hidingHandler) Enabled(ctx context.Context, l slog.Level) bool { return hh.h.Enabled(ctx, l) }

func (hh *hidingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, hh.d.Hide(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(hh.attr(a))
		return true
	})
	return hh.h.Handle(ctx, out)
}

func (hh *hidingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	hidden := make([]slog.Attr, len(as))
	for i, a := range as {
		hidden[i] = hh.attr(a)
	}
	return &hidingHandler{h: hh.h.WithAttrs(hidden), d: hh.d}
}

func (hh *hidingHandler) WithGroup(name string) slog.Handler {
	return &hidingHandler{h: hh.h.WithGroup(name), d: hh.d}
}

// attr is a with its value hidden; a value that is not a string is hidden as it would print.
func (hh *hidingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, hh.d.Hide(v.String()))
	case slog.KindGroup:
		g := v.Group()
		hidden := make([]any, len(g))
		for i, ga := range g {
			hidden[i] = hh.attr(ga)
		}
		return slog.Group(a.Key, hidden...)
	case slog.KindAny:
		s := v.String()
		if h := hh.d.Hide(s); h != s {
			return slog.String(a.Key, h)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
