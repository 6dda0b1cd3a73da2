package assistant

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/skills"
)

func TestSkillsSaveReadDelete(t *testing.T) {
	f := newFixture(t, "anthropic", time.Minute)
	ctx := context.Background()
	if _, err := f.svc.PutSkill(ctx, "weekly-review", skills.Input{Title: " Weekly  review ", Body: "Every Friday, list what is done."}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PutSkill(ctx, "weekly-review", skills.Input{Title: "Weekly review", Body: "List what is done and what slipped."}); err != nil {
		t.Fatal(err)
	}
	sks, err := f.svc.Skills(ctx)
	if err != nil || len(sks) != 1 || sks[0].Title != "Weekly review" || sks[0].Body != "" {
		t.Fatalf("skills %+v, %v", sks, err)
	}
	sk, err := f.svc.Skill(ctx, "weekly-review")
	if err != nil || sk.Body != "List what is done and what slipped." || sk.UpdatedAt.IsZero() {
		t.Fatalf("skill %+v, %v", sk, err)
	}
	bad := []struct {
		name string
		in   skills.Input
	}{
		{"Bad Name", skills.Input{Title: "t", Body: "b"}},
		{"-dash", skills.Input{Title: "t", Body: "b"}},
		{"ok", skills.Input{Title: "", Body: "b"}},
		{"ok", skills.Input{Title: "t", Body: "  "}},
		{"ok", skills.Input{Title: strings.Repeat("t", 121), Body: "b"}},
		{"ok", skills.Input{Title: "t", Body: strings.Repeat("b", 20001)}},
	}
	for _, b := range bad {
		if _, err := f.svc.PutSkill(ctx, b.name, b.in); !problem.Is(err, problem.KindInvalid) || strings.Count(problem.Sentence(err), ". ") > 1 {
			t.Errorf("PutSkill(%q, %+v): %v", b.name, b.in, err)
		}
	}
	if sks, _ := f.svc.Skills(ctx); len(sks) != 1 {
		t.Fatalf("a refused skill was saved: %+v", sks)
	}
	if err := f.svc.DeleteSkill(ctx, "weekly-review"); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.DeleteSkill(ctx, "weekly-review"); !problem.Is(err, problem.KindNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := f.svc.Skill(ctx, "weekly-review"); !problem.Is(err, problem.KindNotFound) {
		t.Fatalf("read after delete: %v", err)
	}
}

// The instructions name the saved skills; hub_read_skill reads one.
func TestTurnNamesAndReadsSkills(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, time.Minute)
			ctx := context.Background()
			if _, err := f.svc.PutSkill(ctx, "standup", skills.Input{Title: "Daily stand-up notes", Body: "Three bullets: done, next, blocked."}); err != nil {
				t.Fatal(err)
			}
			f.srv.Script(
				enginetest.ToolCall("hub_read_skill", map[string]any{"name": "standup"}),
				enginetest.ToolCall("hub_read_skill", map[string]any{"name": "nope"}),
				enginetest.Say("Done."),
			)
			r, _, err := f.turn(t, wire, "write my stand-up")
			if err != nil {
				t.Fatal(err)
			}
			reqs := f.srv.Requests()
			if !strings.Contains(reqs[0].System, "- standup: Daily stand-up notes") || strings.Contains(reqs[0].System, "Three bullets") {
				t.Fatalf("system %q", reqs[0].System)
			}
			if tr, _ := reqs[1].LastToolResult(); tr.IsError || !strings.Contains(tr.Content, "Three bullets: done, next, blocked.") {
				t.Fatalf("read skill %+v", tr)
			}
			if r.Tools[0].Summary != "Read the skill “Daily stand-up notes”." || r.Tools[1].Status != "error" {
				t.Fatalf("rows %+v", r.Tools)
			}
		})
	}
}

func TestSkillsBlockNamesAtMostTwenty(t *testing.T) {
	if skillsBlock(nil) != "" {
		t.Fatal("a block without skills")
	}
	var sks []skills.Skill
	for i := range 25 {
		sks = append(sks, skills.Skill{Name: string(rune('a' + i)), Title: "t"})
	}
	if n := strings.Count(skillsBlock(sks), "\n- "); n != skills.MaxNamed {
		t.Fatalf("%d skills named, want %d", n, skills.MaxNamed)
	}
}
