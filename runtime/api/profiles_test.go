package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/profiles"
)

func TestProfileRoutes(t *testing.T) {
	f, folder := newJobsFixture(t)
	code, careful := f.call(t, "POST", "/api/agent/profiles",
		`{"name":"Careful","agent":"standin","folder":"`+folder+`","settings":{"mode":"review","maxTurns":5}}`)
	if code != http.StatusCreated || careful["name"] != "Careful" || careful["folder"] != folder || careful["starred"] != false ||
		careful["settings"].(map[string]any)["mode"] != "review" || careful["createdAt"] == nil || careful["updatedAt"] == nil {
		t.Fatalf("create = %d %v", code, careful)
	}
	code, quick := f.call(t, "POST", "/api/agent/profiles", `{"name":"Anything goes","agent":"standin","settings":{}}`)
	if code != http.StatusCreated || quick["folder"] != nil {
		t.Fatalf("create without a folder = %d %v", code, quick)
	}
	id, quickID := careful["id"].(string), quick["id"].(string)

	rows, evs := f.count(t, "run_profiles"), f.count(t, "events")
	for _, c := range []struct {
		name, method, path, body string
		want                     int
		sentence                 string
	}{
		{"bad JSON", "POST", "/api/agent/profiles", `{"name":`, 400, "The body is not valid JSON: it ends too soon."},
		{"unknown field", "POST", "/api/agent/profiles", `{"name":"x","agent":"standin","colour":"red"}`, 400, `Unknown field "colour".`},
		{"unknown setting", "POST", "/api/agent/profiles", `{"name":"x","agent":"standin","settings":{"speed":1}}`, 400, `Unknown field "speed".`},
		{"duplicate name", "POST", "/api/agent/profiles", `{"name":"careful","agent":"standin"}`, 409, `There is already a run profile named "careful"; choose another name.`},
		{"no name", "POST", "/api/agent/profiles", `{"name":"  ","agent":"standin"}`, 400, "A profile's name is 1 to 60 characters."},
		{"long name", "POST", "/api/agent/profiles", `{"name":"` + strings.Repeat("n", 61) + `","agent":"standin"}`, 400, "A profile's name is 1 to 60 characters."},
		{"unknown agent", "POST", "/api/agent/profiles", `{"name":"x","agent":"gpt"}`, 400, `There is no agent "gpt"; the agents are standin.`},
		{"no agent", "POST", "/api/agent/profiles", `{"name":"x"}`, 400, "Give the profile a name and an agent."},
		{"relative folder", "POST", "/api/agent/profiles", `{"name":"x","agent":"standin","folder":"src"}`, 400, `The folder "src" must be an absolute path.`},
		{"bad settings", "POST", "/api/agent/profiles", `{"name":"x","agent":"standin","settings":{"mode":"yolo"}}`, 400, `Mode "yolo" is not one of ask, review or unattended.`},
		{"bad context window", "POST", "/api/agent/profiles", `{"name":"x","agent":"standin","settings":{"contextTier":"huge"}}`, 400, `Context window "huge" is not one of standard or long.`},
		{"fast not true or false", "POST", "/api/agent/profiles", `{"name":"x","agent":"standin","settings":{"fast":"yes"}}`, 400, `Field "settings.fast" must be true or false, not string.`},
		{"context window not text", "POST", "/api/agent/profiles", `{"name":"x","agent":"standin","settings":{"contextTier":1}}`, 400, `Field "settings.contextTier" must be text, not number.`},
		{"patch duplicate", "PATCH", "/api/agent/profiles/" + quickID, `{"name":"CAREFUL"}`, 409, `There is already a run profile named "CAREFUL"; choose another name.`},
		{"patch bad settings", "PATCH", "/api/agent/profiles/" + id, `{"settings":{"maxTurns":-1}}`, 400, "The turns limit must be between 0 (none) and 10000."},
		{"patch unknown field", "PATCH", "/api/agent/profiles/" + id, `{"starred":true}`, 400, `Unknown field "starred".`},
		{"patch missing", "PATCH", "/api/agent/profiles/prf_nope", `{"name":"y"}`, 404, `There is no run profile "prf_nope".`},
		{"star missing", "POST", "/api/agent/profiles/prf_nope/star", ``, 404, `There is no run profile "prf_nope".`},
		{"delete missing", "DELETE", "/api/agent/profiles/prf_nope", ``, 404, `There is no run profile "prf_nope".`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, body := f.call(t, c.method, c.path, c.body)
			if got != c.want || body["error"] != c.sentence {
				t.Fatalf("got %d %q, want %d %q", got, body["error"], c.want, c.sentence)
			}
		})
	}
	if r, e := f.count(t, "run_profiles"), f.count(t, "events"); r != rows || e != evs {
		t.Errorf("refused requests changed profiles (%d→%d) or events (%d→%d)", rows, r, evs, e)
	}

	// A patch changes the fields given; starring one unstars the other; the starred one lists first.
	code, patched := f.call(t, "PATCH", "/api/agent/profiles/"+id, `{"name":"Very careful","settings":{"mode":"ask"}}`)
	if code != 200 || patched["name"] != "Very careful" || patched["folder"] != folder || patched["settings"].(map[string]any)["maxTurns"] != nil {
		t.Fatalf("patch = %d %v", code, patched)
	}
	if code, p := f.call(t, "POST", "/api/agent/profiles/"+quickID+"/star", ""); code != 200 || p["starred"] != true {
		t.Fatalf("star = %d %v", code, p)
	}
	if code, p := f.call(t, "POST", "/api/agent/profiles/"+id+"/star", ""); code != 200 || p["starred"] != true {
		t.Fatalf("star = %d %v", code, p)
	}
	_, list := f.call(t, "GET", "/api/agent/profiles", "")
	ps := list["profiles"].([]any)
	if len(ps) != 2 || ps[0].(map[string]any)["id"] != id || ps[1].(map[string]any)["starred"] != false {
		t.Fatalf("list = %v", list)
	}
	var changed int
	f.store.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = ? AND subject = ?", profiles.KindChanged, quickID).Scan(&changed)
	if changed != 3 { // created, starred, unstarred
		t.Errorf("%d profile.changed events for %s, want 3", changed, quickID)
	}
	if code, _ := f.call(t, "DELETE", "/api/agent/profiles/"+id, ""); code != http.StatusNoContent {
		t.Fatalf("delete = %d", code)
	}
	if n := f.count(t, "run_profiles"); n != 1 {
		t.Errorf("%d profiles after delete, want 1", n)
	}
}

func TestAssignWithProfile(t *testing.T) {
	f, folder := newJobsFixture(t)
	code, p := f.call(t, "POST", "/api/agent/profiles",
		`{"name":"Careful","agent":"standin","folder":"`+folder+`","settings":{"mode":"review","maxTurns":5,"model":"p1","contextTier":"long","fast":true}}`)
	if code != http.StatusCreated {
		t.Fatalf("create = %d %v", code, p)
	}
	for _, c := range []struct {
		name, body string
		want       int
		check      func(job map[string]any) bool
		sentence   string
	}{
		{"filled from the profile", `{"title":"Say hello","profile":"careful"}`, 201, func(j map[string]any) bool {
			s := j["settings"].(map[string]any)
			return j["agent"] == "standin" && j["folder"] == folder && s["mode"] == "review" && s["maxTurns"] == float64(5) && s["model"] == "p1" &&
				s["contextTier"] == "long" && s["fast"] == true
		}, ""},
		{"fast turned off for one run", `{"title":"Say hello","profile":"careful","settings":{"fast":false,"contextTier":"standard"}}`, 201, func(j map[string]any) bool {
			s := j["settings"].(map[string]any)
			return s["contextTier"] == "" && s["fast"] == false && s["model"] == "p1"
		}, ""},
		{"the request wins", `{"title":"Say hello","profile":"` + p["id"].(string) + `","settings":{"mode":"unattended"}}`, 201, func(j map[string]any) bool {
			s := j["settings"].(map[string]any)
			return j["folder"] == folder && s["mode"] == "unattended" && s["maxTurns"] == float64(5) && s["model"] == "p1"
		}, ""},
		{"unknown profile", `{"title":"Say hello","profile":"Nope"}`, 400, nil, `There is no run profile "Nope".`},
		{"with continue", `{"title":"Say hello","profile":"Careful","continue":"job_x"}`, 400, nil,
			"A run that continues a session keeps that session's agent and folder; leave out the profile."},
		{"no profile, no default", `{"title":"Say hello"}`, 400, nil, "Name the agent to run: standin."},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := f.call(t, "POST", "/api/agent/assign", c.body)
			if code != c.want || c.check != nil && !c.check(body) || c.sentence != "" && body["error"] != c.sentence {
				t.Fatalf("assign = %d %v", code, body)
			}
		})
	}
}
