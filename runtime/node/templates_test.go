package node

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTemplates(t *testing.T) {
	want := []string{"assistant", "manager", "developer", "tester", "writer", "researcher", "research-writer", "designer", "devops", "analyst"}
	var got []string
	looks := map[Avatar]string{}
	slugs := map[string]bool{}
	for _, tp := range Templates() {
		got = append(got, tp.ID)
		if tp.Name == "" || tp.Role == "" || tp.Summary == "" {
			t.Errorf("%s: a name, role and summary are all needed: %+v", tp.ID, tp)
		}
		if !ValidHandle(tp.Slug) || ReservedHandle(tp.Slug) {
			t.Errorf("%s: slug %q cannot be a handle", tp.ID, tp.Slug)
		}
		if slugs[tp.Slug] {
			t.Errorf("%s: slug %q is used twice", tp.ID, tp.Slug)
		}
		slugs[tp.Slug] = true
		if n := utf8.RuneCountInString(tp.Charter); n < 500 || n > 1200 {
			t.Errorf("%s: charter is %d characters, want 500 to 1,200", tp.ID, n)
		}
		if !strings.Contains(tp.Charter, "session") || !strings.Contains(tp.Charter, "coding agent") {
			t.Errorf("%s: charter does not send coding to the owner's coding agent in a session", tp.ID)
		}
		if !strings.HasPrefix(tp.Charter, "You ") {
			t.Errorf("%s: charter does not speak to the node: %.30q", tp.ID, tp.Charter)
		}
		if other, ok := looks[tp.Avatar]; ok {
			t.Errorf("%s looks the same as %s: %+v", tp.ID, other, tp.Avatar)
		}
		looks[tp.Avatar] = tp.ID
		if !slices.Contains(Shapes, tp.Avatar.Shape) || !slices.Contains(Colors, tp.Avatar.Color) || !slices.Contains(Eyes, tp.Avatar.Eyes) {
			t.Errorf("%s: avatar %+v is not from the palette", tp.ID, tp.Avatar)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("template ids = %q, want %q", got, want)
	}
}

func TestTemplatesAreFresh(t *testing.T) {
	ts := Templates()
	ts[0].Charter = "changed"
	if Templates()[0].Charter == "changed" {
		t.Error("changing a returned template changed the next call's")
	}
}

func TestTemplateJSON(t *testing.T) {
	b, err := json.Marshal(Templates()[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "name", "slug", "role", "summary", "avatar", "charter"} {
		if _, ok := m[k]; !ok {
			t.Errorf("template JSON has no %q: %s", k, b)
		}
	}
	av, _ := m["avatar"].(map[string]any)
	for _, k := range []string{"shape", "color", "eyes"} {
		if _, ok := av[k]; !ok {
			t.Errorf("avatar JSON has no %q: %s", k, b)
		}
	}
}

func TestCrewTemplates(t *testing.T) {
	crews := CrewTemplates()
	wantIDs := map[string][]string{
		"software-team": {"manager", "developer", "tester", "writer"},
		"research-desk": {"manager", "researcher", "research-writer"},
	}
	if len(crews) != len(wantIDs) {
		t.Fatalf("%d crew templates, want %d", len(crews), len(wantIDs))
	}
	for _, c := range crews {
		if c.Title == "" {
			t.Errorf("%s has no title", c.ID)
		}
		if !slices.Equal(c.Members, wantIDs[c.ID]) {
			t.Errorf("%s members = %q, want %q", c.ID, c.Members, wantIDs[c.ID])
		}
		for _, id := range c.Members {
			if tp, ok := TemplateByID(id); !ok || tp.ID != id {
				t.Errorf("%s names %q, which is not a template", c.ID, id)
			}
		}
		if c.Lead != "manager" || !slices.Contains(c.Members, c.Lead) {
			t.Errorf("%s is led by %q, want the manager among its members", c.ID, c.Lead)
		}
	}
}

func TestTemplateByID(t *testing.T) {
	cases := []struct{ in, want string }{
		{"assistant", "assistant"},
		{"research-writer", "research-writer"},
		{"feature-engineer", "developer"},
		{"docs-writer", "writer"},
		{"nope", ""},
		{"", ""},
		{"Developer", ""},
	}
	for _, c := range cases {
		tp, ok := TemplateByID(c.in)
		if ok != (c.want != "") || tp.ID != c.want {
			t.Errorf("TemplateByID(%q) = %q, %v; want %q", c.in, tp.ID, ok, c.want)
		}
	}
}

func TestCharterOf(t *testing.T) {
	dev, _ := TemplateByID("developer")
	cases := []struct {
		name, template, charter string
		edited                  bool
		want                    string
	}{
		{"unedited follows the template", "developer", "an old text", false, dev.Charter},
		{"unedited retired id follows its successor", "feature-engineer", "an old text", false, dev.Charter},
		{"edited keeps its own", "developer", "my own rules", true, "my own rules"},
		{"edited to empty stays empty", "developer", "", true, ""},
		{"no template keeps its own", "", "given", false, "given"},
		{"unknown template keeps its own", "gone", "given", false, "given"},
	}
	for _, c := range cases {
		if got := CharterOf(c.template, c.charter, c.edited); got != c.want {
			t.Errorf("%s: CharterOf = %.40q, want %.40q", c.name, got, c.want)
		}
	}
}

func TestAvatarFor(t *testing.T) {
	prev := AvatarFor(0)
	for n := 1; n < 50; n++ {
		a := AvatarFor(n)
		if a.Shape == prev.Shape || a.Color == prev.Color || a.Eyes == prev.Eyes {
			t.Errorf("AvatarFor(%d) = %+v is too like AvatarFor(%d) = %+v", n, a, n-1, prev)
		}
		if !slices.Contains(Shapes, a.Shape) || !slices.Contains(Colors, a.Color) || !slices.Contains(Eyes, a.Eyes) {
			t.Errorf("AvatarFor(%d) = %+v is not from the palette", n, a)
		}
		prev = a
	}
	if a := AvatarFor(-3); a != AvatarFor(3) {
		t.Errorf("AvatarFor(-3) = %+v, want AvatarFor(3)", a)
	}
}
