package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The node's own tools on the computer (spec 002 §8.13): commands, files, git reads and the
// computer's own servers, each through the decision order of runtime/computer, with a
// "computer" card for what its owner has not answered yet.
const (
	ToolRun        = "computer_run"
	ToolRunOutput  = "computer_run_output"
	ToolRunStop    = "computer_run_stop"
	ToolFilesWrite = "computer_files_write"
	ToolFilesMove  = "computer_files_move"
	ToolFilesDel   = "computer_files_delete"
	ToolGit        = "computer_git"
	ToolHTTP       = "computer_http"
)

var computerTools = []string{ToolRun, ToolRunOutput, ToolRunStop, ToolFilesWrite, ToolFilesMove, ToolFilesDel, ToolGit, ToolHTTP}

func init() {
	for _, name := range computerTools {
		ownerOnly[name] = true
		if name != ToolRunOutput && name != ToolGit {
			actingTools[name] = true
		}
	}
}

// computerWordsRe finds a turn that may want the computer itself.
var computerWordsRe = regexp.MustCompile(`(?i)\b(attached|computer|run|command|shell|terminal|install|download|script|files?|folders?|directory|disk|git|status|diff|log|localhost|127\.0\.0\.1|server|port|process(es)?|htop|top|ls|cat|grep|npm|pip|python|node|make|write|save|move|rename|delete|remove|report|notes?|log ?in|sign[ -]?in|authenticate)\b`)

// computerToolsFor are the computer tools a turn offers: only a turn its owner started and only
// they read (every room here is the owner's alone), where the words are about the computer or
// the turn carries on work; never a helper's.
func computerToolsFor(t Turn, n Node, text string, has bool) []string {
	if !has || !t.ByOwner || n.ParentID != "" {
		return nil
	}
	if t.Reason == ReasonMessage && !computerWordsRe.MatchString(text) {
		return nil
	}
	return computerTools
}

type runIn struct {
	Command    string   `json:"command" jsonschema:"one command line, run with bash -c" check:"minLength=1,maxLength=8000"`
	Folder     string   `json:"folder,omitempty" jsonschema:"where it runs; your own folder when left out" check:"maxLength=1000"`
	Background bool     `json:"background,omitempty" jsonschema:"return at once; you hear when it ends"`
	Timeout    int      `json:"timeoutSeconds,omitempty" jsonschema:"its time limit in seconds (at most 900, the default)" check:"minimum=1,maximum=900"`
	Secrets    []string `json:"secrets,omitempty" jsonschema:"names of saved secrets to put in its environment (you never see them)" check:"maxItems=10,items.maxLength=100"`
}
type runRefIn struct {
	ID     string `json:"id" jsonschema:"the command's id (cmd_…)" check:"minLength=1,maxLength=100"`
	Offset int    `json:"offset,omitempty" jsonschema:"the byte to read from" check:"minimum=0"`
}
type writeIn struct {
	Path    string `json:"path" jsonschema:"the file, relative to the folder or absolute" check:"minLength=1,maxLength=1000"`
	Content string `json:"content" jsonschema:"the whole file, at most 1 MB" check:"maxLength=1048576"`
	Folder  string `json:"folder,omitempty" jsonschema:"your own folder when left out" check:"maxLength=1000"`
}
type moveIn struct {
	From   string `json:"from" check:"minLength=1,maxLength=1000"`
	To     string `json:"to" jsonschema:"never an existing file" check:"minLength=1,maxLength=1000"`
	Folder string `json:"folder,omitempty" check:"maxLength=1000"`
}
type deleteIn struct {
	Path      string `json:"path" check:"minLength=1,maxLength=1000"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"a folder with what is in it"`
	Folder    string `json:"folder,omitempty" check:"maxLength=1000"`
}

func computerToolDefs(def func(name, desc string) tools.Tool) []tools.Tool {
	return []tools.Tool{
		sudoToolDef(def),
		shareToolDef(def),
		saveAttachmentTool(def),
		tools.Define(def(ToolRun, "Run one command line on your owner's computer (bash -c, in your own folder unless you name one), in its OS sandbox. "+
			"Output comes back (64 KB; computer_run_output for more). After a minute it goes on in the background and you hear when it ends. "+
			"Another folder asks your owner once. No sudo (computer_sudo), git push or fetch. "+
			"A sign-in (az login, gh auth login --web, gcloud auth login…) uses its browser flow: the page or code reaches your owner on a card, and it runs in the background for 15 minutes; a device code only when they ask for one or the browser flow failed."),
			tools.Typed[runIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in runIn) (tools.Result, error) {
				return computerDo(ctx, tc, ToolRun, func(c *turnCtx, folder string) (computer.Call, error) {
					return computer.Call{Op: computer.OpRun, Folder: folder, Command: in.Command}, nil
				}, in.Folder, func(c *turnCtx, call computer.Call, d computer.Decision) (tools.Result, error) {
					return c.s.runCommand(ctx, c, call, d, in)
				})
			}}),
		tools.Define(def(ToolRunOutput, "Read more of a command's output, from a byte offset (kept 6 hours after it ends)."),
			tools.Typed[runRefIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in runRefIn) (tools.Result, error) {
				c, err := computerTurn(tc)
				if err != nil {
					return tools.Result{}, err
				}
				r, err := c.s.cfg.Computer.Output(c.node.ID, in.ID, in.Offset)
				return runResult(r, err)
			}}),
		tools.Define(def(ToolRunStop, "Stop a command you started, and what it started; its end then wakes no one."),
			tools.Typed[runRefIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in runRefIn) (tools.Result, error) {
				c, err := computerTurn(tc)
				if err != nil {
					return tools.Result{}, err
				}
				r, err := c.s.cfg.Computer.Stop(c.node.ID, in.ID)
				if err == nil {
					c.s.noteComputer(ctx, c, ToolRunStop, r.Folder, programOf(r.Command), computer.RungOwn, nil)
				}
				return runResult(r, err)
			}}),
		tools.Define(def(ToolFilesWrite, "Write a whole file (at most 1 MB) on your owner's computer: your own folder unless you name one (another asks once)."),
			tools.Typed[writeIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in writeIn) (tools.Result, error) {
				var path string
				return computerDo(ctx, tc, ToolFilesWrite, func(c *turnCtx, folder string) (computer.Call, error) {
					var err error
					path, err = computer.Path(folder, in.Path)
					return computer.Call{Op: computer.OpWrite, Folder: folder, Paths: []string{path}}, err
				}, in.Folder, func(c *turnCtx, _ computer.Call, _ computer.Decision) (tools.Result, error) {
					if err := computer.WriteFile(path, []byte(in.Content)); err != nil {
						return tools.Result{}, err
					}
					return tools.Result{Summary: fmt.Sprintf("Wrote %s (%d bytes).", path, len(in.Content))}, nil
				})
			}}),
		tools.Define(def(ToolFilesMove, "Move or rename a file or folder on your owner's computer; never over an existing file."),
			tools.Typed[moveIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in moveIn) (tools.Result, error) {
				var from, to string
				return computerDo(ctx, tc, ToolFilesMove, func(c *turnCtx, folder string) (computer.Call, error) {
					var err error
					if from, err = computer.Path(folder, in.From); err != nil {
						return computer.Call{}, err
					}
					to, err = computer.Path(folder, in.To)
					return computer.Call{Op: computer.OpWrite, Folder: folder, Paths: []string{from, to}}, err
				}, in.Folder, func(c *turnCtx, _ computer.Call, _ computer.Decision) (tools.Result, error) {
					if err := computer.MoveFile(from, to); err != nil {
						return tools.Result{}, err
					}
					return tools.Result{Summary: fmt.Sprintf("Moved %s to %s.", from, to)}, nil
				})
			}}),
		tools.Define(def(ToolFilesDel, "Delete a file, or a folder with recursive, on your owner's computer."),
			tools.Typed[deleteIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in deleteIn) (tools.Result, error) {
				var path string
				return computerDo(ctx, tc, ToolFilesDel, func(c *turnCtx, folder string) (computer.Call, error) {
					var err error
					path, err = computer.Path(folder, in.Path)
					return computer.Call{Op: computer.OpWrite, Folder: folder, Paths: []string{path}}, err
				}, in.Folder, func(c *turnCtx, _ computer.Call, _ computer.Decision) (tools.Result, error) {
					own, _ := c.s.cfg.Computer.NodeFolder(c.node.Slug)
					if err := computer.DeletePath(path, in.Recursive, []string{own}); err != nil {
						return tools.Result{}, err
					}
					return tools.Result{Summary: "Deleted " + path + "."}, nil
				})
			}}),
		tools.Define(def(ToolGit, "Read a git repository on your owner's computer: status, diff, log, show or branch. Changing code goes to an agent session."),
			tools.Typed[computer.GitRequest]{Run: func(ctx context.Context, tc *tools.ToolContext, in computer.GitRequest) (tools.Result, error) {
				var line string
				return computerDo(ctx, tc, ToolGit, func(c *turnCtx, folder string) (computer.Call, error) {
					var err error
					line, err = computer.GitLine(in)
					return computer.Call{Op: computer.OpRead, Folder: folder, Paths: []string{folder}}, err
				}, in.Folder, func(c *turnCtx, call computer.Call, d computer.Decision) (tools.Result, error) {
					// Read-only: the sandbox lets git change nothing but its own folders' index lock.
					r, err := c.s.cfg.Computer.Run(ctx, computer.RunRequest{NodeID: c.node.ID, Folder: call.Folder, Command: line, Timeout: time.Minute})
					return runResult(r, err)
				})
			}}),
		tools.Define(def(ToolHTTP, "Call a server on your owner's computer (localhost: a development server, a local API). Each new address asks your owner once; every redirect is checked."),
			tools.Typed[computer.HTTPRequest]{Run: func(ctx context.Context, tc *tools.ToolContext, in computer.HTTPRequest) (tools.Result, error) {
				return computerDo(ctx, tc, ToolHTTP, func(c *turnCtx, folder string) (computer.Call, error) {
					return computer.Call{Op: computer.OpHTTP, Folder: folder, URL: in.URL}, nil
				}, "", func(c *turnCtx, call computer.Call, d computer.Decision) (tools.Result, error) {
					pol, err := c.s.computerPolicy(ctx, c)
					if err != nil {
						return tools.Result{}, err
					}
					pol.Granted = c.s.grantsOf(c.node.ID)
					a, err := c.s.cfg.Computer.HTTP(ctx, in, func(u *url.URL) error {
						if d := computer.Decide(computer.Call{Op: computer.OpHTTP, Folder: call.Folder, URL: u.String()}, pol); !d.Allowed() {
							return errors.New(d.Reason)
						}
						return nil
					})
					if err != nil {
						return tools.Result{}, err
					}
					raw, _ := json.Marshal(a)
					return tools.Result{Summary: string(raw), Data: a}, nil
				})
			}}),
	}
}

func runResult(r computer.Result, err error) (tools.Result, error) {
	if err != nil {
		return tools.Result{}, err
	}
	s := fmt.Sprintf("`%s` exited %d after %.1fs.", r.Command, r.ExitCode, r.Seconds)
	switch {
	case r.Running:
		s = fmt.Sprintf("`%s` is still running (%s); you hear when it ends, or stop it with computer_run_stop.", r.Command, r.ID)
	case r.Stopped:
		s = fmt.Sprintf("`%s` was stopped.", r.Command)
	case r.TimedOut:
		s = fmt.Sprintf("`%s` reached its time limit and was ended.", r.Command)
	}
	if r.More > 0 {
		s += fmt.Sprintf(" %d more bytes of output: computer_run_output {id: %q, offset: %d}.", r.More, r.ID, len(r.Output))
	}
	return tools.Result{Summary: s, Data: r}, nil
}

var errNoComputer = errors.New("The computer tools are not available here.")

// computerTurn is the turn of a computer tool's call, where it may be used at all.
func computerTurn(tc *tools.ToolContext) (*turnCtx, error) {
	c, err := ownerTurn(tc, "Your owner's computer is used only in a turn they started.")
	if err != nil {
		return nil, err
	}
	if c.s.cfg.Computer == nil {
		return nil, errNoComputer
	}
	return c, nil
}

// computerDo runs one computer call through the decision order: refused, done, or put on a
// card its call waits for.
func computerDo(ctx context.Context, tc *tools.ToolContext, tool string, build func(c *turnCtx, folder string) (computer.Call, error), folder string,
	do func(c *turnCtx, call computer.Call, d computer.Decision) (tools.Result, error)) (tools.Result, error) {
	c, err := computerTurn(tc)
	if err != nil {
		return tools.Result{}, err
	}
	s := c.s
	dir, err := s.computerFolder(c, folder)
	if err != nil {
		return tools.Result{}, err
	}
	call, err := build(c, dir)
	if err != nil {
		return tools.Result{}, err
	}
	for asked := false; ; asked = true {
		pol, err := s.computerPolicy(ctx, c)
		if err != nil {
			return tools.Result{}, err
		}
		pol.Granted = s.grantsOf(c.node.ID)
		d := computer.Decide(call, pol)
		switch {
		case d.Decision == judge.Refuse:
			s.noteComputer(ctx, c, tool, call.Folder, programOf(call.Command), d.Rung, errors.New("refused"))
			return tools.Result{}, errors.New(d.Reason)
		case d.Allowed():
			if d.Rung == computer.RungOnce {
				s.useGrants(c.node.ID, call)
			}
			res, err := do(c, call, d)
			s.noteComputer(ctx, c, tool, call.Folder, programOf(call.Command), d.Rung, err)
			return res, err
		case asked:
			return tools.Result{}, errors.New("Your owner's answer did not cover this call; ask again only if it is still needed.")
		}
		approved, out, err := s.askComputer(ctx, c, tool, call, d)
		if err != nil || !approved {
			return tools.Result{Summary: out}, err
		}
	}
}

// computerFolder is the folder a call names, made absolute, else the node's own folder.
func (s *Service) computerFolder(c *turnCtx, folder string) (string, error) {
	own, err := s.cfg.Computer.NodeFolder(c.node.Slug)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(folder) == "" || folder == "." {
		return own, nil
	}
	dir, err := computer.Path(own, folder)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("There is no folder %s on this computer.", dir)
	}
	return dir, nil
}

// computerPolicy is the decision order's policy for the node now: its kept answers for this
// mission and always, and whether it works unattended.
func (s *Service) computerPolicy(ctx context.Context, c *turnCtx) (computer.Policy, error) {
	kept, err := s.cfg.Computer.Answers.Kept(ctx, c.node.ID, missionKey(c.rt.turn))
	if err != nil {
		return computer.Policy{}, err
	}
	return s.cfg.Computer.Policy(kept, s.unattended(ctx, c.node)), nil
}

// unattended: the node's computer work is not "ask", and its owner's run profile runs unattended.
func (s *Service) unattended(ctx context.Context, n Node) bool {
	if n.Autonomy.ComputerWork == "ask" {
		return false
	}
	pp, ok := s.cfg.Runs.(tools.ProfilePicker)
	if !ok {
		return false
	}
	p, found, err := pp.PickProfile(ctx, "")
	return err == nil && found && p.Settings.Mode != nil && *p.Settings.Mode == string(judge.ModeUnattended)
}

// missionKey is what "This mission" covers: the plan the turn works for, else its conversation.
func missionKey(t Turn) string {
	if rest, ok := strings.CutPrefix(t.Lane, "work:"); ok {
		id, _, _ := strings.Cut(rest, ":")
		return "mission:" + id
	}
	return "lane:" + t.Lane
}

// programOf is a command line's first word, for the ledger: never its arguments.
func programOf(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
