package app

import (
	"context"
	"strconv"

	"github.com/ensemblework/ensemble/runtime/needs"
)

// watchNeeds calls fn with the open Needs me decisions now and after every change to them, until
// ctx ends: the desktop window's title and notifications follow it.
func (r *Runtime) watchNeeds(ctx context.Context, fn func(open []needs.Decision)) {
	sub := r.bus.Subscribe(256)
	defer sub.Close()
	report := func() {
		open, err := r.needs.List(ctx, needs.Filter{Limit: 500})
		if err == nil {
			fn(open)
		}
	}
	report()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.Done():
			return
		case ev := <-sub.C:
			if ev.Kind.Family() == "needs" {
				report()
			}
		}
	}
}

// needsTitle is the window's title with the count of what waits on the person.
func needsTitle(n int) string {
	switch n {
	case 0:
		return "Ensemble"
	case 1:
		return "Ensemble — 1 needs you"
	}
	return "Ensemble — " + strconv.Itoa(n) + " need you"
}

// needsMenuLabel is the window menu's line about Needs me.
func needsMenuLabel(n int) string {
	switch n {
	case 0:
		return "Nothing needs you"
	case 1:
		return "1 decision needs you"
	}
	return strconv.Itoa(n) + " decisions need you"
}

// needsLine is a decision in one line, for a notification.
func needsLine(d needs.Decision) string {
	what := d.Question
	if d.Kind == needs.Permission {
		what = "Allow " + d.Call + "?"
	}
	if d.Source.Title != "" {
		what = d.Source.Title + ": " + what
	}
	if r := []rune(what); len(r) > 200 {
		what = string(r[:199]) + "…"
	}
	return what
}
