package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// ToolSudo is computer_sudo (spec 002 §8.13, as the administrator): the exact command on an
// owner-only card with a password box. The password is sealed in the page for this computer's
// key and handed to sudo only through its askpass helper: never to the node, the model, a
// terminal's screen, a log or the ledger, which keeps only the command's SHA-256.
const ToolSudo = "computer_sudo"

// SudoCardLife is how long a sudo card waits for its owner.
const SudoCardLife = 30 * time.Minute

func init() {
	ownerOnly[ToolSudo] = true
	actingTools[ToolSudo] = true
	computerTools = append(computerTools, ToolSudo)
}

// SudoAsk is a sudo card's question (data.type "sudo").
type SudoAsk struct {
	Command  string `json:"command"`
	Reason   string `json:"reason"`
	Folder   string `json:"folder"`
	Computer string `json:"computer"`
	// Hash is the command's SHA-256: the sealed box's name, and all the ledger keeps of it.
	Hash  string `json:"hash"`
	Tries int    `json:"tries"` // passwords sudo refused so far
	// ExitCode is how the command ended, once it ran.
	ExitCode *int `json:"exitCode,omitempty"`
}

type sudoIn struct {
	Command string `json:"command" jsonschema:"the exact command to run as the administrator, without sudo" check:"minLength=1,maxLength=4000"`
	Reason  string `json:"reason" jsonschema:"why, in a sentence for your owner" check:"minLength=1,maxLength=500"`
	Folder  string `json:"folder,omitempty" jsonschema:"where it runs; your own folder when left out" check:"maxLength=1000"`
}

func sudoToolDef(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolSudo, "Run one exact command as the administrator (an install, a service): your owner sees it on a card and runs it with their password, which you never see, or declines. You hear the output."),
		tools.Typed[sudoIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in sudoIn) (tools.Result, error) {
			c, err := computerTurn(tc)
			if err != nil {
				return tools.Result{}, err
			}
			return c.s.askSudo(ctx, c, in)
		}})
}

// askSudo refuses the dangerous forms at once, else puts the command on a sudo card and waits.
func (s *Service) askSudo(ctx context.Context, c *turnCtx, in sudoIn) (tools.Result, error) {
	folder, err := s.computerFolder(c, in.Folder)
	if err != nil {
		return tools.Result{}, err
	}
	pol, err := s.computerPolicy(ctx, c)
	if err != nil {
		return tools.Result{}, err
	}
	command := strings.TrimSpace(in.Command)
	if why := computer.SudoProblem(command, pol); why != "" {
		return tools.Result{}, errors.New(why)
	}
	host, _ := os.Hostname()
	ask := &SudoAsk{Command: command, Reason: strings.TrimSpace(in.Reason), Folder: folder, Computer: host, Hash: computer.SudoHash(command)}
	body := fmt.Sprintf("%s asks to run as the administrator: %s", c.node.Name, oneLineOf(command, 200))
	return s.cardAndWait(ctx, c, body, Card{Type: "sudo", Sudo: ask})
}

// errSudoGaveUp ends a sudo card after its last wrong password.
var errSudoGaveUp = errors.New("node: sudo refused every password")

// sudoCardWork runs a sudo card's command, with the password its owner typed (nil: without one).
// A password sudo refuses puts the card back for another try, SudoTries in all.
func (s *Service) sudoCardWork(ctx context.Context, c *Card, password []byte) (string, error) {
	a := c.Sudo
	if a == nil {
		return "", errors.New("the card names no command")
	}
	n, _ := s.Node(ctx, c.NodeID)
	t := Turn{ID: c.TurnID, NodeID: c.NodeID, Lane: c.Lane, RoomID: roomOfLane(c.Lane, n.DMRoomID), Private: c.Private, ByOwner: c.ByOwner, Depth: c.Depth}
	r, err := s.cfg.Computer.Sudo(ctx, computer.SudoRequest{NodeID: c.NodeID, Folder: a.Folder, Command: a.Command, Password: password,
		Ended: func(r computer.Result) { s.commandEnded(t, n, r) }})
	switch {
	case errors.Is(err, computer.ErrPasswordNeeded):
		return "", errors.New("sudo asks for a password on this computer: type it in the card.")
	case errors.Is(err, computer.ErrWrongPassword):
		a.Tries++
		if a.Tries >= computer.SudoTries {
			return "", errSudoGaveUp
		}
		return "", fmt.Errorf("sudo did not take that password (try %d of %d).", a.Tries, computer.SudoTries)
	case err != nil:
		return "", err
	}
	s.noteSudo(ctx, c.NodeID, a, r)
	if r.Running {
		return fmt.Sprintf("It runs as the administrator (%s), still going after a minute: you hear when it ends.", r.ID), nil
	}
	code := r.ExitCode
	a.ExitCode = &code
	out := r.Output
	if len(out) > 6000 {
		out = "…" + out[len(out)-6000:]
	}
	return fmt.Sprintf("It ran as the administrator and exited %d. Its output:\n%s", r.ExitCode, out), nil
}

// AnswerSudo answers a sudo card with the password its owner typed, opened from its sealed box
// by the caller; it is zeroed once sudo has read it.
func (s *Service) AnswerSudo(ctx context.Context, messageID string, password []byte, by string) (Message, error) {
	defer clear(password)
	return s.settleCard(ctx, messageID, Approve, by, func(c *Card) (string, error) {
		if c.Type != "sudo" {
			return "", problem.Invalid("That card is not a sudo card.")
		}
		return s.sudoCardWork(ctx, c, password)
	})
}

// SudoCard is the sudo card's question, for the page that shows the password box.
func (s *Service) SudoCard(ctx context.Context, messageID string) (Message, Card, error) {
	return s.cardOfType(ctx, messageID, "sudo")
}

func (s *Service) noteSudo(ctx context.Context, nodeID string, a *SudoAsk, r computer.Result) {
	code := r.ExitCode
	ev := ComputerTool{NodeID: nodeID, Tool: ToolSudo, Folder: a.Folder, Rung: "owner", CommandHash: a.Hash}
	if !r.Running {
		ev.ExitCode = &code
	}
	s.emitComputer(ctx, nodeID, ev)
}

// cardOfType is the card of type typ that message messageID holds, with its question.
func (s *Service) cardOfType(ctx context.Context, messageID, typ string) (Message, Card, error) {
	m, err := s.messageIn(ctx, s.cfg.Store.Reader(), messageID)
	if err != nil {
		return Message{}, Card{}, err
	}
	var c Card
	if m.Kind == KindApproval && json.Unmarshal(m.Data, &c) == nil && c.Type == typ && (typ == "sudo" && c.Sudo != nil || typ == "secret" && c.Secret != nil) {
		return m, c, nil
	}
	return Message{}, Card{}, problem.NotFound("There is no %s card %q.", typ, messageID)
}
