package computer

import (
	"testing"

	"github.com/ensemblework/ensemble/runtime/judge"
)

func TestDecideBrowse(t *testing.T) {
	p := Policy{Runtime: "127.0.0.1:7777", Kept: []Scope{{ScopeAddress, "192.168.1.5:80"}}}
	for _, tc := range []struct {
		name, url string
		want      judge.Decision
		rung      Rung
	}{
		{"public page", "https://example.com/a", judge.Allow, RungPublic},
		{"this computer", "http://localhost:3000/", judge.Ask, RungAsk},
		{"its network", "http://10.0.0.2/", judge.Ask, RungAsk},
		{"a .local name", "http://printer.local/", judge.Ask, RungAsk},
		{"kept", "http://192.168.1.5/", judge.Allow, RungKept},
		{"Ensemble itself", "http://127.0.0.1:7777/", judge.Refuse, RungFloor},
		{"not the web", "file:///etc/passwd", judge.Refuse, RungFloor},
		{"a password in it", "https://u:p@example.com/", judge.Refuse, RungFloor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Call{Op: OpBrowse, Folder: "/x", URL: tc.url}, p)
			if d.Decision != tc.want || d.Rung != tc.rung {
				t.Fatalf("got %v/%v (%s), want %v/%v", d.Decision, d.Rung, d.Reason, tc.want, tc.rung)
			}
		})
	}
}
