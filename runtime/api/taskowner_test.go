package api

import (
	"fmt"
	"testing"
)

// A task's owner field gives it to a node or a crew, and refuses what is not one of the
// person's own with one sentence, changing nothing.
func TestTaskOwnerNode(t *testing.T) {
	f := newNodeFixture(t)
	ada := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Ada","slug":"ada","role":"researcher"}`)
	bo := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Bo","slug":"bo","role":"tester"}`)
	crew := f.mustCall(t, 201, "POST", "/api/node/crews", fmt.Sprintf(`{"title":"Launch","nodeIds":[%q,%q]}`, ada["id"], bo["id"]))
	adaID, crewID := ada["id"].(string), crew["id"].(string)
	task := f.mustCall(t, 201, "POST", "/api/tasks", fmt.Sprintf(`{"title":"Ship it","owner":"node","assigneeNodeId":%q}`, adaID))
	id := task["id"].(string)
	na, _ := task["nodeAssignee"].(map[string]any)
	if task["assigneeNodeId"] != adaID || na["kind"] != "node" || na["name"] != "Ada" || na["handle"] != "ada" {
		t.Fatalf("created %v", task)
	}
	person := f.mustCall(t, 201, "POST", "/api/people", `{"name":"Cy"}`)
	for _, c := range []struct {
		name, body string
		want       int
		sentence   string
	}{
		{"both ids", fmt.Sprintf(`{"assigneeNodeId":%q,"assigneeRoomId":%q}`, adaID, crewID), 400,
			"Give the task to a node or a crew, not both: name assigneeNodeId or assigneeRoomId."},
		{"a person and a node", fmt.Sprintf(`{"ownerId":%q,"assigneeNodeId":%q}`, person["id"], adaID), 400,
			"A task is with a person or a node, not both: name ownerId or the node."},
		{"owner node alone", `{"owner":"node"}`, 400, `Owner node needs the node or the crew: {"owner": "node", "assigneeNodeId": "…"} or "assigneeRoomId".`},
		{"owner me with a node", fmt.Sprintf(`{"owner":"me","assigneeNodeId":%q}`, adaID), 400,
			`Owner "me" names no node; say owner node to give the task to a node or a crew.`},
		{"an unknown owner", `{"owner":"robot"}`, 400, `Owner "robot" is not one of me, person, agent, unassigned or node.`},
		{"no such node", `{"assigneeNodeId":"nod_nobody"}`, 404, `There is no node "nod_nobody" to give the task to.`},
		{"a DM is no crew", fmt.Sprintf(`{"assigneeRoomId":%q}`, ada["dmRoomId"]), 404, fmt.Sprintf("There is no crew %q to give the task to.", ada["dmRoomId"])},
		{"no such crew", `{"owner":"node","assigneeRoomId":"room_nope"}`, 404, `There is no crew "room_nope" to give the task to.`},
	} {
		code, out := f.call(t, "PATCH", "/api/tasks/"+id, c.body)
		if code != c.want || out["error"] != c.sentence {
			t.Errorf("%s: %d %v, want %d %q", c.name, code, out, c.want, c.sentence)
		}
	}
	if got := f.mustCall(t, 200, "GET", "/api/tasks/"+id, ""); got["assigneeNodeId"] != adaID || got["ownerId"] != nil {
		t.Fatalf("a refused change changed the task: %v", got)
	}
	// Naming the crew alone means owner node.
	got := f.mustCall(t, 200, "PATCH", "/api/tasks/"+id, fmt.Sprintf(`{"assigneeRoomId":%q}`, crewID))
	na, _ = got["nodeAssignee"].(map[string]any)
	if got["assigneeRoomId"] != crewID || got["assigneeNodeId"] != nil || na["kind"] != "crew" || na["name"] != "Launch" {
		t.Fatalf("given to the crew: %v", got)
	}
	list := f.mustCall(t, 200, "GET", "/api/tasks", "")["tasks"].([]any)
	if na, _ := list[0].(map[string]any)["nodeAssignee"].(map[string]any); na["name"] != "Launch" {
		t.Fatalf("the list does not name the crew: %v", list[0])
	}
	// Another owner takes it back.
	got = f.mustCall(t, 200, "PATCH", "/api/tasks/"+id, `{"owner":"unassigned"}`)
	if got["assigneeRoomId"] != nil || got["nodeAssignee"] != nil {
		t.Fatalf("taken back: %v", got)
	}
	if w := f.mustCall(t, 200, "GET", "/api/node/tasks/"+id+"/work", ""); w["work"] != nil {
		t.Fatalf("work = %v, want null", w)
	}
	f.mustCall(t, 404, "GET", "/api/node/tasks/tsk_nope/work", "")
}

// The owner field offers the person's nodes and crews, each crew with its lead and size.
func TestNodeAssignable(t *testing.T) {
	f := newNodeFixture(t)
	empty := f.mustCall(t, 200, "GET", "/api/node/assignable", "")
	if n, c := empty["nodes"].([]any), empty["crews"].([]any); len(n) != 0 || len(c) != 0 {
		t.Fatalf("without nodes: %v", empty)
	}
	ada := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Ada","slug":"ada","role":"researcher"}`)
	bo := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Bo","slug":"bo","role":"tester"}`)
	f.mustCall(t, 201, "POST", "/api/node/crews", fmt.Sprintf(`{"title":"Launch","nodeIds":[%q,%q],"leadNodeId":%q}`, ada["id"], bo["id"], bo["id"]))
	a := f.mustCall(t, 200, "GET", "/api/node/assignable", "")
	nodes, crews := a["nodes"].([]any), a["crews"].([]any)
	if len(nodes) != 2 || nodes[0].(map[string]any)["slug"] != "ada" || nodes[1].(map[string]any)["role"] != "tester" {
		t.Fatalf("nodes = %v", nodes)
	}
	if len(crews) != 1 {
		t.Fatalf("crews = %v", crews)
	}
	c := crews[0].(map[string]any)
	lead, _ := c["lead"].(map[string]any)
	if c["title"] != "Launch" || c["members"] != float64(2) || lead["slug"] != "bo" || c["roomId"] == "" {
		t.Fatalf("crew = %v", c)
	}
}
