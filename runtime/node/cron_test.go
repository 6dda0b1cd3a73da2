package node

import (
	"strings"
	"testing"
	"time"
)

func TestScheduleSlots(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name, rule, tz, after, upto string
		want                        []string
	}{
		{"hourly, two hours", "0 * * * *", "UTC", "2030-01-01T09:00:00Z", "2030-01-01T11:00:00Z",
			[]string{"2030-01-01T10:00:00Z", "2030-01-01T11:00:00Z"}},
		{"after is excluded, upto included", "0 10 * * *", "UTC", "2030-01-01T10:00:00Z", "2030-01-02T10:00:00Z",
			[]string{"2030-01-02T10:00:00Z"}},
		{"none yet", "30 9 * * *", "UTC", "2030-01-01T09:31:00Z", "2030-01-01T12:00:00Z", nil},
		{"in a time zone", "0 9 * * *", "Europe/Paris", "2030-01-01T00:00:00Z", "2030-01-01T12:00:00Z",
			[]string{"2030-01-01T08:00:00Z"}},
		{"summer time", "0 9 * * *", "Europe/Paris", "2030-07-01T00:00:00Z", "2030-07-01T12:00:00Z",
			[]string{"2030-07-01T07:00:00Z"}},
		{"weekdays only: not on Sunday", "0 9 * * 1-5", "UTC", "2030-01-05T09:30:00Z", "2030-01-06T09:30:00Z", nil},
		{"weekdays only: Monday", "0 9 * * 1-5", "UTC", "2030-01-06T10:00:00Z", "2030-01-07T10:00:00Z",
			[]string{"2030-01-07T09:00:00Z"}},
		{"every 20 minutes", "*/20 * * * *", "UTC", "2030-01-01T09:05:00Z", "2030-01-01T10:00:00Z",
			[]string{"2030-01-01T09:20:00Z", "2030-01-01T09:40:00Z", "2030-01-01T10:00:00Z"}},
		{"a week away looks back one day", "0 12 * * *", "UTC", "2030-01-01T00:00:00Z", "2030-01-08T13:00:00Z",
			[]string{"2030-01-08T12:00:00Z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sch, err := parseSchedule(c.rule, c.tz)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range sch.slots(at(c.after), at(c.upto)) {
				got = append(got, s.Format(time.RFC3339))
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("slots = %v, want %v", got, c.want)
			}
		})
	}
}

func TestScheduleSlotsAreBounded(t *testing.T) {
	sch, _ := parseSchedule("* * * * *", "UTC")
	upto := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
	got := sch.slots(upto.Add(-72*time.Hour), upto)
	if len(got) != maxSlots || !got[len(got)-1].Equal(upto) {
		t.Fatalf("got %d slots ending %v, want the last %d ending %v", len(got), got[len(got)-1], maxSlots, upto)
	}
}

func TestSlotStatus(t *testing.T) {
	slot := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		late time.Duration
		want string
	}{
		{"on time", 0, RunWaiting},
		{"a tick late", 20 * time.Second, RunWaiting},
		{"59 minutes late", 59 * time.Minute, RunWaiting},
		{"exactly an hour late", time.Hour, RunWaiting},
		{"just over an hour", time.Hour + time.Second, RunMissed},
		{"a night asleep", 9 * time.Hour, RunMissed},
	} {
		if got := slotStatus(slot, slot.Add(c.late)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestParseScheduleRefuses(t *testing.T) {
	for _, c := range []struct{ rule, tz, want string }{
		{"0 9 * *", "UTC", "is not a five-field cron schedule"},
		{"0 0 9 * * *", "UTC", "is not a five-field cron schedule"},
		{"61 * * * *", "UTC", "is not a five-field cron schedule"},
		{"0 9 * * *", "Mars/Olympus", "There is no time zone"},
	} {
		_, err := parseSchedule(c.rule, c.tz)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseSchedule(%q, %q) = %v, want %q", c.rule, c.tz, err, c.want)
		}
	}
	if _, err := parseSchedule("0 9 * * 1-5", ""); err != nil {
		t.Errorf("the local time zone by default: %v", err)
	}
}
