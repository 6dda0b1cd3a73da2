package api

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"

	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/httpin"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/node"
)

// mountNodes adds Ensemble Node's routes (spec 002 §9), behind the same guard as the rest of /api:
//
//	GET    /api/node/bootstrap                       nodes, rooms, templates and limits at once
//	GET    /api/node/nodes                           POST {templateId?, name?, slug?, role?, …} → 201
//	GET    /api/node/nodes/{id}                      PATCH node.NodeChange, DELETE; id or handle
//	GET    /api/node/nodes/{id}/memory               POST {content} → 201
//	DELETE /api/node/nodes/{id}/memory/{memoryId}
//	GET    /api/node/nodes/{id}/computer-answers     the folders and addresses kept for its computer cards; DELETE …/{answerId}
//	POST   /api/node/nodes/{id}/promote              keeps a helper as a lasting node, with its own DM
//	GET    /api/node/nodes/{id}/turns                [limit]
//	POST   /api/node/crews                           {title, nodeIds, leadNodeId?} → 201 the room
//	GET    /api/node/rooms                           GET/PATCH/DELETE /api/node/rooms/{id}
//	POST   /api/node/rooms/{id}/nodes                {nodeId}; DELETE …/nodes/{nodeId}
//	GET    /api/node/rooms/{id}/messages             [after] [before] [limit] [author]
//	POST   /api/node/rooms/{id}/messages             node.Post → 201, 200 for a resend (same clientId)
//	POST   /api/node/rooms/{id}/attachments          ?name=FILE, the file itself as the body (≤ 100 MB) → 201 {attachment}
//	POST   /api/node/rooms/{id}/read                 {seq}
//	POST   /api/node/rooms/{id}/stop                 {scope?: room|all}, or no body
//	GET    /api/node/rooms/{id}/export               the room as Markdown
//	GET    /api/node/messages/{id}                   DELETE: one of the person's own
//	GET    /api/node/messages/{id}/files/{fileId}    a file a node shared (node_share_file), as evidence is served
//	GET    /api/node/search                          q [roomId] [limit]
//	GET    /api/node/approvals                       the cards waiting for the person
//	POST   /api/node/approvals/{messageId}           {decision: approve|discard|once|mission|always}; a second answer is 409
//	GET    /api/node/sudo/{messageId}                a sudo card's command and the key to seal its password for (sudo.go)
//	POST   /api/node/sudo/{messageId}                {action: run, sealed?} | {action: deny}
//	GET    /api/node/secrets/{messageId}             a secret card's name and the key to seal its value for
//	POST   /api/node/secrets/{messageId}             {sealed, allow?}: saved once, on this computer
//	GET    /api/node/assignable                      the nodes and crews a task's owner field offers
//	GET    /api/node/tasks/{id}/work                 {work: {node, doing} | null}: what a change of owner stops
//	GET    /api/node/sessions                        [q] [limit]: the agent sessions nodes drive
//	GET    /api/node/sessions/{id}                   one session with its runs
//	POST   /api/node/sessions/{id}/control           {action: queue|steer|replace|stop, prompt?, title?, queued?: keep|drop}
//	POST   /api/node/sessions/{id}/queue             {order}: every queued message's id; a stale order is 409
//	DELETE /api/node/sessions/{id}/queue/{jobId}     takes one queued message out (204)
//	DELETE /api/node/sessions/{id}                   stops what runs, deletes the session (never continued)
//	POST   /api/node/sessions/{id}/hand-over         {nodeId}
//	GET    /api/node/routines                        [nodeId]; POST node.NewRoutine → 201 (a webhook's token once)
//	GET    /api/node/routines/{id}                   PATCH node.RoutineChange, DELETE
//	POST   /api/node/routines/{id}/run               run now → 201 the run; POST …/token a new webhook token
//	GET    /api/node/routines/{id}/runs              [limit], newest first
//	POST   /api/node/hooks/routines/{id}             a routine's webhook: its own token, no launch token (mountRoutineHook)
//	GET    /api/node/plans/{id}                      a mission: its steps, attempts and requirement ledger
//	POST   /api/node/plans/{id}/stop                 stops the mission; nobody reports
func (s *Server) mountNodes(api func(string, http.HandlerFunc)) {
	if s.opts.Nodes == nil {
		return
	}
	api("GET /api/node/bootstrap", s.nodeBootstrap)
	api("GET /api/node/nodes", s.listNodes)
	api("POST /api/node/nodes", s.createNode)
	api("GET /api/node/nodes/{id}", s.getNode)
	api("PATCH /api/node/nodes/{id}", s.patchNode)
	api("DELETE /api/node/nodes/{id}", s.deleteNode)
	api("GET /api/node/nodes/{id}/memory", s.nodeMemory)
	api("POST /api/node/nodes/{id}/memory", s.rememberNode)
	api("DELETE /api/node/nodes/{id}/memory/{memoryId}", s.forgetNode)
	api("POST /api/node/nodes/{id}/promote", s.promoteHelper)
	api("GET /api/node/nodes/{id}/computer-answers", s.computerAnswers)
	api("DELETE /api/node/nodes/{id}/computer-answers/{answerId}", s.revokeComputerAnswer)
	api("GET /api/node/nodes/{id}/turns", s.nodeTurns)
	api("POST /api/node/crews", s.createCrew)
	api("GET /api/node/rooms", s.listRooms)
	api("GET /api/node/rooms/{id}", s.getRoom)
	api("PATCH /api/node/rooms/{id}", s.patchRoom)
	api("DELETE /api/node/rooms/{id}", s.deleteRoom)
	api("POST /api/node/rooms/{id}/nodes", s.addToCrew)
	api("DELETE /api/node/rooms/{id}/nodes/{nodeId}", s.removeFromCrew)
	api("GET /api/node/rooms/{id}/messages", s.roomMessages)
	api("POST /api/node/rooms/{id}/messages", s.postNodeMessage)
	api("POST /api/node/rooms/{id}/attachments", s.attachNodeFile)
	api("POST /api/node/rooms/{id}/read", s.markRoomRead)
	api("POST /api/node/rooms/{id}/stop", s.stopRoom)
	api("GET /api/node/rooms/{id}/export", s.exportRoom)
	api("GET /api/node/messages/{id}", s.getNodeMessage)
	api("DELETE /api/node/messages/{id}", s.deleteNodeMessage)
	api("GET /api/node/search", s.searchNodeMessages)
	api("GET /api/node/approvals", s.pendingCards)
	api("POST /api/node/approvals/{messageId}", s.answerCard)
	api("GET /api/node/sudo/{messageId}", s.getSudo)
	api("POST /api/node/sudo/{messageId}", s.answerSudo)
	api("GET /api/node/messages/{id}/files/{fileId}", s.sharedFile)
	s.mountNodeLogins(api)
	api("GET /api/node/secrets/{messageId}", s.getSecretCard)
	api("POST /api/node/secrets/{messageId}", s.answerSecretCard)
	api("GET /api/node/assignable", s.nodeAssignable)
	api("GET /api/node/tasks/{id}/work", s.nodeTaskWork)
	api("GET /api/node/sessions", s.listNodeSessions)
	api("GET /api/node/sessions/{id}", s.getNodeSession)
	api("POST /api/node/sessions/{id}/control", s.controlNodeSession)
	api("POST /api/node/sessions/{id}/queue", s.reorderNodeSession)
	api("DELETE /api/node/sessions/{id}/queue/{jobId}", s.cancelQueuedMessage)
	api("POST /api/node/sessions/{id}/hand-over", s.handOverNodeSession)
	api("DELETE /api/node/sessions/{id}", s.deleteNodeSession)
	s.mountRoutines(api)
	api("GET /api/node/plans/{id}", s.getPlan)
	api("POST /api/node/plans/{id}/stop", s.stopPlan)
}

// nodeLimits are the limits of spec 002 §3 the UI shows before it is refused.
var nodeLimits = map[string]int{"nodes": node.MaxNodes, "crewNodes": node.MaxCrewNodes, "memories": node.MaxMemories}

// nodeBootstrap is what the Node screen opens with, in one request. The templates come from the
// node package once its templates land; until then the list is empty.
func (s *Server) nodeBootstrap(w http.ResponseWriter, r *http.Request) {
	ns, err := s.opts.Nodes.Nodes(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	rooms, err := s.opts.Nodes.Rooms(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"nodes": ns, "rooms": rooms, "templates": node.Templates(),
		"crewTemplates": node.CrewTemplates(), "limits": nodeLimits})
}

func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) {
	s.answerList(w, r, "nodes", func(ctx context.Context) (any, error) { return s.opts.Nodes.Nodes(ctx) })
}

func (s *Server) createNode(w http.ResponseWriter, r *http.Request) {
	var in node.NewNode
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	n, err := s.opts.Nodes.Create(r.Context(), in)
	s.answer(w, r, http.StatusCreated, n, err)
}

func (s *Server) getNode(w http.ResponseWriter, r *http.Request) {
	n, err := s.opts.Nodes.Node(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, n, err)
}

func (s *Server) patchNode(w http.ResponseWriter, r *http.Request) {
	var c node.NodeChange
	if err := decode(w, r, &c); err != nil {
		s.writeErr(w, r, err)
		return
	}
	n, err := s.opts.Nodes.Update(r.Context(), r.PathValue("id"), c)
	s.answer(w, r, http.StatusOK, n, err)
}

func (s *Server) deleteNode(w http.ResponseWriter, r *http.Request) {
	s.answer(w, r, http.StatusNoContent, nil, s.opts.Nodes.Delete(r.Context(), r.PathValue("id")))
}

// promoteHelper keeps a helper as a lasting node, with its own DM.
func (s *Server) promoteHelper(w http.ResponseWriter, r *http.Request) {
	n, err := s.opts.Nodes.PromoteHelper(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, n, err)
}

func (s *Server) nodeMemory(w http.ResponseWriter, r *http.Request) {
	ms, err := s.opts.Nodes.Memories(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, map[string]any{"memories": ms}, err)
}

func (s *Server) rememberNode(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Content string `json:"content"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	m, err := s.opts.Nodes.Remember(r.Context(), r.PathValue("id"), in.Content)
	s.answer(w, r, http.StatusCreated, m, err)
}

func (s *Server) forgetNode(w http.ResponseWriter, r *http.Request) {
	err := s.opts.Nodes.Forget(r.Context(), r.PathValue("id"), r.PathValue("memoryId"))
	s.answer(w, r, http.StatusNoContent, nil, err)
}

func (s *Server) nodeTurns(w http.ResponseWriter, r *http.Request) {
	limit, ok := queryInt(w, r, "limit")
	if !ok {
		return
	}
	n, err := s.opts.Nodes.Node(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	ts, err := s.opts.Nodes.Turns(r.Context(), n.ID, int(limit))
	if ts == nil {
		ts = []node.Turn{} // a node that never answered has none, not null
	}
	s.answer(w, r, http.StatusOK, map[string]any{"turns": ts}, err)
}

func (s *Server) createCrew(w http.ResponseWriter, r *http.Request) {
	var in node.NewCrew
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	room, err := s.opts.Nodes.CreateCrew(r.Context(), in)
	s.answer(w, r, http.StatusCreated, room, err)
}

func (s *Server) listRooms(w http.ResponseWriter, r *http.Request) {
	s.answerList(w, r, "rooms", func(ctx context.Context) (any, error) { return s.opts.Nodes.Rooms(ctx) })
}

func (s *Server) getRoom(w http.ResponseWriter, r *http.Request) {
	room, err := s.opts.Nodes.Room(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, room, err)
}

func (s *Server) patchRoom(w http.ResponseWriter, r *http.Request) {
	var c node.RoomChange
	if err := decode(w, r, &c); err != nil {
		s.writeErr(w, r, err)
		return
	}
	room, err := s.opts.Nodes.UpdateRoom(r.Context(), r.PathValue("id"), c)
	s.answer(w, r, http.StatusOK, room, err)
}

func (s *Server) deleteRoom(w http.ResponseWriter, r *http.Request) {
	s.answer(w, r, http.StatusNoContent, nil, s.opts.Nodes.DeleteRoom(r.Context(), r.PathValue("id")))
}

func (s *Server) addToCrew(w http.ResponseWriter, r *http.Request) {
	nodeID, ok := s.decodeNodeID(w, r, `Say which node joins the crew: {"nodeId": "…"}.`)
	if !ok {
		return
	}
	room, err := s.opts.Nodes.AddToCrew(r.Context(), r.PathValue("id"), nodeID)
	s.answer(w, r, http.StatusOK, room, err)
}

func (s *Server) removeFromCrew(w http.ResponseWriter, r *http.Request) {
	room, err := s.opts.Nodes.RemoveFromCrew(r.Context(), r.PathValue("id"), r.PathValue("nodeId"))
	s.answer(w, r, http.StatusOK, room, err)
}

func (s *Server) roomMessages(w http.ResponseWriter, r *http.Request) {
	var p node.Page
	after, ok := queryInt(w, r, "after")
	if !ok {
		return
	}
	before, ok := queryInt(w, r, "before")
	if !ok {
		return
	}
	limit, ok := queryInt(w, r, "limit")
	if !ok {
		return
	}
	p.After, p.Before, p.Limit, p.Author = after, before, int(limit), r.URL.Query().Get("author")
	ms, err := s.opts.Nodes.Messages(r.Context(), r.PathValue("id"), p)
	s.answer(w, r, http.StatusOK, map[string]any{"messages": ms}, err)
}

// postNodeMessage posts the person's message: 201 with it, or 200 with the first copy when a
// message with the same clientId is already in the room (PostMessage hands back that copy; it
// was written before this request began).
func (s *Server) postNodeMessage(w http.ResponseWriter, r *http.Request) {
	var in node.Post
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	began := s.now().UTC()
	m, err := s.opts.Nodes.PostMessage(r.Context(), r.PathValue("id"), in)
	status := http.StatusCreated
	if err == nil && in.ClientID != "" && m.ClientID == in.ClientID && m.CreatedAt.Before(began) {
		status = http.StatusOK
	}
	s.answer(w, r, status, m, err)
}

func (s *Server) markRoomRead(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Seq *int64 `json:"seq"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if in.Seq == nil {
		writeError(w, http.StatusBadRequest, `Say up to which message is read: {"seq": 12}.`)
		return
	}
	s.answer(w, r, http.StatusNoContent, nil, s.opts.Nodes.MarkRead(r.Context(), r.PathValue("id"), *in.Seq))
}

// stopRoom stops the nodes' work in the room, or everywhere with scope "all"; the body is optional.
func (s *Server) stopRoom(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Scope string `json:"scope"`
	}
	raw, err := httpin.ReadBody(w, r, maxBody)
	if err == nil && len(raw) > 0 {
		err = httpin.Decode(raw, &in)
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	switch in.Scope {
	case "":
		in.Scope = "room"
	case "room", "all":
	default:
		writeError(w, http.StatusBadRequest, `scope is room or all, not `+strconv.Quote(in.Scope)+`.`)
		return
	}
	m, err := s.opts.Nodes.Stop(r.Context(), r.PathValue("id"), in.Scope)
	s.answer(w, r, http.StatusOK, m, err)
}

func (s *Server) exportRoom(w http.ResponseWriter, r *http.Request) {
	room, err := s.opts.Nodes.Room(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	md, err := s.opts.Nodes.Export(r.Context(), room.ID)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/markdown; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": room.Title + ".md"}))
	w.Write([]byte(md))
}

func (s *Server) getNodeMessage(w http.ResponseWriter, r *http.Request) {
	m, err := s.opts.Nodes.Message(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, m, err)
}

func (s *Server) deleteNodeMessage(w http.ResponseWriter, r *http.Request) {
	s.answer(w, r, http.StatusNoContent, nil, s.opts.Nodes.DeleteMessage(r.Context(), r.PathValue("id")))
}

func (s *Server) searchNodeMessages(w http.ResponseWriter, r *http.Request) {
	limit, ok := queryInt(w, r, "limit")
	if !ok {
		return
	}
	q := r.URL.Query()
	ms, err := s.opts.Nodes.Search(r.Context(), q.Get("q"), q.Get("roomId"), int(limit))
	s.answer(w, r, http.StatusOK, map[string]any{"messages": ms}, err)
}

func (s *Server) pendingCards(w http.ResponseWriter, r *http.Request) {
	s.answerList(w, r, "cards", func(ctx context.Context) (any, error) { return s.opts.Nodes.PendingCards(ctx) })
}

// answerCard settles a node's card; the Service says 409 with who answered when it already was.
func (s *Server) answerCard(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Decision string `json:"decision"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	m, err := s.opts.Nodes.Answer(r.Context(), r.PathValue("messageId"), in.Decision, s.cardAnswerer(r))
	s.answer(w, r, http.StatusOK, m, err)
}

// cardAnswerer names the client that answers a card, as node.Service.Answer takes it: the launch
// token is the command line's, a paired phone's cookie a phone's, the session cookie a browser's
// (the order answerer tells them apart in).
func (s *Server) cardAnswerer(r *http.Request) string {
	switch s.answerer(r) {
	case needs.ByCommandLine:
		return "cli"
	case needs.ByPhone:
		return "phone"
	}
	return "browser"
}

// queryInt reads a whole-number query parameter of 0 or more (0 when absent); a bad one is
// answered 400 with one sentence and ok false.
func queryInt(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		writeError(w, http.StatusBadRequest, name+" must be a whole number, 0 or more.")
		return 0, false
	}
	return n, true
}

// nodeAssignable is what a task's Owner field offers (spec 002 §6.6).
func (s *Server) nodeAssignable(w http.ResponseWriter, r *http.Request) {
	a, err := s.opts.Nodes.Assignable(r.Context())
	s.answer(w, r, http.StatusOK, a, err)
}

// nodeTaskWork says what changing a task's owner would stop: null when nothing, so the Hub's owner
// menu changes at once.
func (s *Server) nodeTaskWork(w http.ResponseWriter, r *http.Request) {
	if _, err := s.records.Tasks().Get(r.Context(), r.PathValue("id")); err != nil {
		s.writeErr(w, r, err)
		return
	}
	work, err := s.opts.Nodes.WorkOnTask(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, map[string]any{"work": work}, err)
}

func (s *Server) listNodeSessions(w http.ResponseWriter, r *http.Request) {
	limit, ok := queryInt(w, r, "limit")
	if !ok {
		return
	}
	s.answerList(w, r, "sessions", func(ctx context.Context) (any, error) {
		return s.opts.Nodes.AgentSessions(ctx, r.URL.Query().Get("q"), int(limit))
	})
}

func (s *Server) getNodeSession(w http.ResponseWriter, r *http.Request) {
	d, err := s.opts.Nodes.AgentSession(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, map[string]any{"session": d}, err)
}

// controlNodeSession is the session card's controls; a refusal is 409 with what to do instead.
func (s *Server) controlNodeSession(w http.ResponseWriter, r *http.Request) {
	var in node.SessionControl
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	res, err := s.opts.Nodes.ControlSession(r.Context(), r.PathValue("id"), in)
	s.answer(w, r, http.StatusOK, res, err)
}

func (s *Server) reorderNodeSession(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Order []string `json:"order"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	err := s.opts.Nodes.ReorderSession(r.Context(), r.PathValue("id"), in.Order)
	s.answer(w, r, http.StatusOK, map[string]bool{"ok": err == nil}, err)
}

func (s *Server) cancelQueuedMessage(w http.ResponseWriter, r *http.Request) {
	s.answer(w, r, http.StatusNoContent, nil, s.opts.Nodes.CancelQueued(r.Context(), r.PathValue("id"), r.PathValue("jobId")))
}

// deleteNodeSession is the owner deleting a node's session from its card: what runs stops first.
func (s *Server) deleteNodeSession(w http.ResponseWriter, r *http.Request) {
	s.answer(w, r, http.StatusNoContent, nil, s.opts.Nodes.DeleteAgentSession(r.Context(), r.PathValue("id")))
}

func (s *Server) handOverNodeSession(w http.ResponseWriter, r *http.Request) {
	nodeID, ok := s.decodeNodeID(w, r, `Say which node takes the session: {"nodeId": "…"}.`)
	if !ok {
		return
	}
	id, err := s.opts.Nodes.HandOverSession(r.Context(), r.PathValue("id"), nodeID)
	s.answer(w, r, http.StatusOK, map[string]any{"ok": err == nil, "nodeId": id}, err)
}

// decodeNodeID reads a body that names one node, {"nodeId": "…"}; missing, it answers 400 with
// missing and reports false.
func (s *Server) decodeNodeID(w http.ResponseWriter, r *http.Request, missing string) (string, bool) {
	var in struct {
		NodeID string `json:"nodeId"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return "", false
	}
	if in.NodeID == "" {
		writeError(w, http.StatusBadRequest, missing)
		return "", false
	}
	return in.NodeID, true
}

func (s *Server) getPlan(w http.ResponseWriter, r *http.Request) {
	m, err := s.opts.Nodes.Mission(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, m, err)
}

func (s *Server) stopPlan(w http.ResponseWriter, r *http.Request) {
	m, err := s.opts.Nodes.StopMission(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, m, err)
}

// sharedFile sends a file a node shared into the chat, as a run's evidence is sent.
func (s *Server) sharedFile(w http.ResponseWriter, r *http.Request) {
	f, sh, err := s.opts.Nodes.SharedFile(r.Context(), r.PathValue("id"), r.PathValue("fileId"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.serveEvidence(w, r, sh.Name, f)
}

func (s *Server) computerAnswers(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Nodes.ComputerAnswers(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, map[string]any{"answers": list}, err)
}

func (s *Server) revokeComputerAnswer(w http.ResponseWriter, r *http.Request) {
	err := s.opts.Nodes.RevokeComputerAnswer(r.Context(), r.PathValue("id"), r.PathValue("answerId"))
	s.answer(w, r, http.StatusNoContent, nil, err)
}

// attachNodeFile keeps a file the person attaches in a room: the body is the file itself (at most
// 100 MB), named by ?name=; the message that carries it names its id in attachments.
func (s *Server) attachNodeFile(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		writeError(w, http.StatusBadRequest, "Name the file: ?name=report.pdf, with the file itself as the body.")
		return
	}
	body := http.MaxBytesReader(w, r.Body, computer.MaxShareSize)
	sh, err := s.opts.Nodes.Attach(r.Context(), r.PathValue("id"), name, body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "An attached file is at most 100 MB.")
		return
	}
	s.answer(w, r, http.StatusCreated, map[string]any{"attachment": sh}, err)
}
