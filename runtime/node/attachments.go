package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// Files the owner attaches in a chat (spec 002 §8.13, receiving a file): uploaded first, kept as
// the room's files, then named by the message that carries them. A node puts one on the computer
// with node_save_attachment, under the decision order like any write.
const ToolSaveAttachment = "node_save_attachment"

// uploadLife is how long an uploaded file waits for the message that carries it.
const uploadLife = time.Hour

func init() {
	ownerOnly[ToolSaveAttachment] = true
	actingTools[ToolSaveAttachment] = true
	computerTools = append(computerTools, ToolSaveAttachment)
}

type upload struct {
	roomID string
	file   computer.Shared
	at     time.Time
}

// Attach keeps a file the owner is attaching in a room, for the message that carries it.
func (s *Service) Attach(ctx context.Context, roomID, name string, r io.Reader) (computer.Shared, error) {
	if s.cfg.Computer == nil {
		return computer.Shared{}, problem.Invalid("Files cannot be attached here.")
	}
	room, err := s.Room(ctx, roomID)
	if err != nil {
		return computer.Shared{}, err
	}
	if room.Kind == RoomTask {
		return computer.Shared{}, problem.New(problem.KindForbidden, "A helper's room is for reading; attach the file in your DM or crew.")
	}
	sh, err := s.cfg.Computer.Keep(name, r)
	if err != nil {
		return computer.Shared{}, problem.Invalid("%s", err.Error())
	}
	s.mu.Lock()
	for id, u := range s.uploads {
		if s.now().Sub(u.at) > uploadLife {
			delete(s.uploads, id)
		}
	}
	s.uploads[sh.ID] = upload{roomID: roomID, file: sh, at: s.now()}
	s.mu.Unlock()
	return sh, nil
}

// takeUploads are the files a message names, uploaded to its room; each is taken once.
func (s *Service) takeUploads(roomID string, ids []string) ([]computer.Shared, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []computer.Shared
	for _, id := range ids {
		u, ok := s.uploads[id]
		if !ok || u.roomID != roomID {
			return nil, problem.Invalid("The attachment %q was not uploaded to this room (or waited more than an hour); attach it again.", id)
		}
		out = append(out, u.file)
	}
	for _, id := range ids {
		delete(s.uploads, id)
	}
	return out, nil
}

// attachedNote is how a message's attached files read in a node's transcript.
func attachedNote(m Message) string {
	var d FileData
	if m.Author != AuthorPerson || json.Unmarshal(m.Data, &d) != nil || d.Type != "file" {
		return ""
	}
	var b strings.Builder
	for _, f := range d.Files {
		fmt.Fprintf(&b, " [attached “%s”, %d KB; onto the computer: %s]", f.Name, (f.Size+1023)/1024, ToolSaveAttachment)
	}
	return b.String()
}

type saveIn struct {
	Attachment string `json:"attachment" jsonschema:"the attached file's name (the newest message with it) or its id (nf_…)" check:"minLength=1,maxLength=300"`
	Folder     string `json:"folder,omitempty" jsonschema:"your own folder when left out (another asks your owner once)" check:"maxLength=1000"`
	Path       string `json:"path,omitempty" jsonschema:"where in the folder; its own name by default; ending in / puts it in that subfolder" check:"maxLength=1000"`
	Overwrite  bool   `json:"overwrite,omitempty" jsonschema:"replace a file already there"`
}

func saveAttachmentTool(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolSaveAttachment, "Put a file your owner attached in this chat onto their computer, to work with it there (at most 100 MB): your own folder unless you name one."),
		tools.Typed[saveIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in saveIn) (tools.Result, error) {
			var sh computer.Shared
			var path string
			return computerDo(ctx, tc, ToolSaveAttachment, func(c *turnCtx, folder string) (computer.Call, error) {
				var err error
				if sh, err = c.s.attachmentIn(ctx, c.room.ID, in.Attachment); err != nil {
					return computer.Call{}, err
				}
				rel := in.Path
				switch {
				case rel == "":
					rel = sh.Name
				case strings.HasSuffix(rel, "/"):
					rel = filepath.Join(rel, sh.Name)
				}
				if path, err = computer.Path(folder, rel); err != nil {
					return computer.Call{}, err
				}
				return computer.Call{Op: computer.OpWrite, Folder: folder, Paths: []string{path}}, nil
			}, in.Folder, func(c *turnCtx, _ computer.Call, _ computer.Decision) (tools.Result, error) {
				if err := c.s.cfg.Computer.SaveAttachment(sh, path, in.Overwrite); err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: fmt.Sprintf("Saved “%s” as %s (%d KB).", sh.Name, path, (sh.Size+1023)/1024)}, nil
			})
		}})
}

// attachmentIn is the file the owner attached in the room by its id, or by its name in the newest
// message that has it.
func (s *Service) attachmentIn(ctx context.Context, roomID, ref string) (computer.Shared, error) {
	msgs, err := s.queryMessages(ctx, s.cfg.Store.Reader(), "WHERE room_id = ? AND author = 'person' AND json_extract(data, '$.type') = 'file' ORDER BY seq DESC LIMIT 200", roomID)
	if err != nil {
		return computer.Shared{}, err
	}
	ref = strings.TrimSpace(ref)
	for _, m := range msgs {
		var d FileData
		json.Unmarshal(m.Data, &d)
		if i := slices.IndexFunc(d.Files, func(f computer.Shared) bool { return f.ID == ref || f.Name == ref }); i >= 0 {
			return d.Files[i], nil
		}
	}
	return computer.Shared{}, fmt.Errorf("Your owner attached no file %q in this chat.", ref)
}
