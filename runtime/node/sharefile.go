package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// ToolShareFile is node_share_file (spec 002 §8.13): a file, or a folder zipped, from the owner's
// computer into the chat, checked like an attached file and kept as the node's evidence. It shows
// as a file message beside the node's reply.
const ToolShareFile = "node_share_file"

// FileData is the data of a text message holding files a node shared (type "file").
type FileData struct {
	Type  string            `json:"type"`
	Files []computer.Shared `json:"files"`
}

func init() {
	ownerOnly[ToolShareFile] = true
	actingTools[ToolShareFile] = true
	computerTools = append(computerTools, ToolShareFile)
}

type shareIn struct {
	Path    string `json:"path" jsonschema:"the file or folder (. for the whole folder), relative to the folder or absolute" check:"minLength=1,maxLength=1000"`
	Folder  string `json:"folder,omitempty" jsonschema:"your own folder when left out" check:"maxLength=1000"`
	Caption string `json:"caption,omitempty" jsonschema:"a line shown with it" check:"maxLength=500"`
}

func shareToolDef(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolShareFile, "Show your owner a file from their computer in this chat (a report, a log, a picture, a PDF; a folder is zipped), at most 100 MB. Keys, .env files and saved secrets are never shared."),
		tools.Typed[shareIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in shareIn) (tools.Result, error) {
			var path string
			return computerDo(ctx, tc, ToolShareFile, func(c *turnCtx, folder string) (computer.Call, error) {
				var err error
				if path, err = computer.Path(folder, in.Path); err != nil {
					return computer.Call{}, err
				}
				return computer.Call{Op: computer.OpRead, Folder: folder, Paths: []string{path}}, nil
			}, in.Folder, func(c *turnCtx, _ computer.Call, _ computer.Decision) (tools.Result, error) {
				return c.s.shareFile(ctx, c, path, in.Caption)
			})
		}})
}

func (s *Service) shareFile(ctx context.Context, c *turnCtx, path, caption string) (tools.Result, error) {
	pol, err := s.computerPolicy(ctx, c)
	if err != nil {
		return tools.Result{}, err
	}
	sh, err := s.cfg.Computer.Share(path, pol)
	if err != nil {
		return tools.Result{}, err
	}
	t := c.rt.turn
	data, _ := json.Marshal(FileData{Type: "file", Files: []computer.Shared{sh}})
	body := strings.TrimSpace(caption)
	if body == "" {
		body = sh.Name
	}
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		_, err := s.insertMessageTx(tx, Message{RoomID: roomOfLane(t.Lane, t.RoomID), Author: AuthorNode, NodeID: c.node.ID, Kind: KindText,
			Body: body, Data: data, Private: true, Depth: t.Depth + 1, TurnID: t.ID})
		return err
	})
	if err != nil {
		return tools.Result{}, err
	}
	out := fmt.Sprintf("Shared %s (%d KB) in the chat.", sh.Name, (sh.Size+1023)/1024)
	if len(sh.LeftOut) > 0 {
		out += " Left out: " + strings.Join(sh.LeftOut, ", ") + "."
	}
	return tools.Result{Summary: out, Data: sh}, nil
}

// SharedFile opens a file a node shared, for the route that serves it: the message must hold it.
func (s *Service) SharedFile(ctx context.Context, messageID, fileID string) (*os.File, computer.Shared, error) {
	none := problem.NotFound("There is no such shared file.")
	m, err := s.messageIn(ctx, s.cfg.Store.Reader(), messageID)
	var c Card
	if err == nil && s.cfg.Computer != nil && m.Kind == KindApproval && json.Unmarshal(m.Data, &c) == nil {
		// A held capture opens for its owner from its card (this runtime serves only them).
		sh, ok := heldFile(c, fileID)
		if !ok {
			return nil, computer.Shared{}, none
		}
		f, err := s.cfg.Computer.SharedFile(sh.ID)
		if err != nil {
			return nil, computer.Shared{}, none
		}
		return f, sh, nil
	}
	var d FileData
	if err != nil || m.Kind != KindText || s.cfg.Computer == nil || json.Unmarshal(m.Data, &d) != nil || d.Type != "file" {
		return nil, computer.Shared{}, none
	}
	for _, sh := range d.Files {
		if sh.ID == fileID {
			f, err := s.cfg.Computer.SharedFile(sh.ID)
			if err != nil {
				return nil, computer.Shared{}, none
			}
			return f, sh, nil
		}
	}
	return nil, computer.Shared{}, none
}
