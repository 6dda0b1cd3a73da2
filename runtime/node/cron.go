package node

import (
	"fmt"
	"time"

	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/robfig/cron/v3"
)

// MissedAfter is how late a scheduled time may start: one that passed by more than this, because
// Ensemble was not running (a laptop that slept), is recorded as missed rather than run late.
const MissedAfter = time.Hour

// maxSlots bounds the times one tick records for a routine; catchUp how far back it looks.
const (
	maxSlots = 200
	catchUp  = 24 * time.Hour
)

// schedule is a parsed five-field cron rule in its time zone.
type schedule struct {
	rule cron.Schedule
	loc  *time.Location
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseSchedule reads a five-field cron rule ("0 9 * * 1-5") in the time zone tz (an IANA name;
// empty or "Local" is this computer's).
func parseSchedule(rule, tz string) (schedule, error) {
	loc := time.Local
	if tz != "" && tz != "Local" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return schedule{}, problem.Invalid("There is no time zone %q; use an IANA name such as Europe/Paris.", tz)
		}
		loc = l
	}
	sch, err := cronParser.Parse(rule)
	if err != nil {
		return schedule{}, problem.Invalid("%q is not a five-field cron schedule (minute hour day month weekday, such as \"0 9 * * 1-5\"): %v.", rule, err)
	}
	return schedule{rule: sch, loc: loc}, nil
}

// next is the first time after t.
func (s schedule) next(t time.Time) time.Time { return s.rule.Next(t.In(s.loc)).UTC() }

// slots are the schedule's times in (after, upto], the last maxSlots of them, looking back at
// most catchUp from upto.
func (s schedule) slots(after, upto time.Time) []time.Time {
	if from := upto.Add(-catchUp); after.Before(from) {
		after = from
	}
	var out []time.Time
	for t := s.next(after); !t.IsZero() && !t.After(upto); t = s.next(t) {
		out = append(out, t)
		if len(out) > maxSlots {
			out = out[1:]
		}
	}
	return out
}

// slotStatus is what a scheduled time becomes when the tick at now records it: waiting (to run
// now, or after the run still going) or missed.
func slotStatus(slot, now time.Time) string {
	if now.Sub(slot) > MissedAfter {
		return RunMissed
	}
	return RunWaiting
}

// slotKey is a scheduled time's occurrence key.
func slotKey(t time.Time) string { return "at:" + t.UTC().Format(time.RFC3339) }

// describe says a schedule in words for the node's note and the list.
func describeSchedule(rule, tz string) string {
	if tz == "" {
		tz = "Local"
	}
	return fmt.Sprintf("on the schedule %q (%s time)", rule, tz)
}
