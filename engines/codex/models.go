package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
)

// fastServiceTier is the service tier Codex 0.171's model/list names "Fast"
// ("priority"); thread/start and thread/resume take it as serviceTier.
const fastServiceTier = "priority"

// listTimeout bounds asking Codex for its models: starting app-server, then
// model/list page by page.
const listTimeout = 20 * time.Second

// maxPages stops a cursor that never ends.
const maxPages = 20

// modelList is model/list's answer, the fields Ensemble reads.
type modelList struct {
	Data []struct {
		ID                     string `json:"id"`
		Model                  string `json:"model"`
		DisplayName            string `json:"displayName"`
		Description            string `json:"description"`
		Hidden                 bool   `json:"hidden"`
		IsDefault              bool   `json:"isDefault"`
		DefaultReasoningEffort string `json:"defaultReasoningEffort"`
		SupportedEfforts       []struct {
			ReasoningEffort string `json:"reasoningEffort"`
		} `json:"supportedReasoningEfforts"`
		ServiceTiers []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"serviceTiers"`
	} `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

// catalogOf turns model/list pages into a catalog: the models the picker
// shows (not hidden), their levels in Codex's order (lowest first), their
// default level, and fast mode where a model has the fast service tier.
// Codex says nothing of context windows here.
func catalogOf(pages []modelList) []engines.ModelInfo {
	var out []engines.ModelInfo
	for _, p := range pages {
		for _, m := range p.Data {
			if m.Hidden || m.ID == "" {
				continue
			}
			info := engines.ModelInfo{ID: m.ID, Name: m.DisplayName, Vendor: "OpenAI", Description: m.Description, Default: m.IsDefault}
			for _, e := range m.SupportedEfforts {
				if e.ReasoningEffort != "" {
					info.Efforts = append(info.Efforts, e.ReasoningEffort)
				}
			}
			if len(info.Efforts) > 0 {
				info.DefaultEffort = m.DefaultReasoningEffort
			}
			for _, t := range m.ServiceTiers {
				if t.ID == fastServiceTier {
					info.Fast = true
				}
			}
			out = append(out, info)
		}
	}
	return out
}

// listModels asks a codex app-server of its own for model/list, every page.
func (d *Driver) listModels(ctx context.Context, bin, home string) ([]engines.ModelInfo, error) {
	var pages []modelList
	err := d.appServer(ctx, bin, home, func(ctx context.Context, c *conn) error {
		params := map[string]any{}
		for range maxPages {
			p, err := call[modelList](ctx, c, "model/list", params)
			if err != nil {
				return err
			}
			pages = append(pages, p)
			if p.NextCursor == nil || *p.NextCursor == "" {
				break
			}
			params = map[string]any{"cursor": *p.NextCursor}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("codex: list models: %w", err)
	}
	return catalogOf(pages), nil
}

// appServer starts a codex app-server of its own, with a run's environment, for f's requests
// (listTimeout for all of them), and ends it.
func (d *Driver) appServer(ctx context.Context, bin, home string, f func(context.Context, *conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	dir := home
	if dir == "" {
		dir = os.TempDir()
	}
	proc, err := agentproc.Start(agentproc.Command{
		Name:        "codex",
		Path:        bin,
		Args:        []string{"app-server"},
		Dir:         dir,
		Env:         agentEnv(d.environ(), home, "", nil),
		InstallHint: installHint,
		Graces:      agentproc.Graces{Close: closeGrace, Term: termGrace, Drain: drainGrace},
		Log:         d.log,
	})
	if err != nil {
		return err
	}
	c := newConn(proc.Input(), quiet{})
	proc.Serve(ctx, agentproc.Handlers{
		Out:   func(out io.Reader) { _ = c.serve(context.Background(), out) },
		Ended: func(error) {},
		Stop:  func(sctx context.Context) error { return proc.Stop(sctx, func(context.Context) bool { return false }) },
	})
	defer func() {
		proc.CloseInput() // codex exits when its input ends
		<-proc.Done()
	}()
	// Codex exiting early closes the connection, which ends every call.
	if _, err := c.call(ctx, "initialize", map[string]any{
		"clientInfo": map[string]any{"name": "ensemble", "title": "Ensemble", "version": version},
	}); err != nil {
		return err
	}
	if err := c.notify("initialized", nil); err != nil {
		return err
	}
	return f(ctx, c)
}

// quiet is the handler of a connection that only lists models: it reads no
// notifications and refuses any request, which model/list never makes.
type quiet struct{}

func (quiet) notify(string, json.RawMessage) {}

func (quiet) request(context.Context, string, json.RawMessage) (any, error) {
	return nil, errors.New("ensemble is only listing models")
}

func (quiet) protocolError(string) {}

// modelIDs are the catalog's ids, Detection.Models.
func modelIDs(cat []engines.ModelInfo) []string {
	ids := make([]string, len(cat))
	for i, m := range cat {
		ids[i] = m.ID
	}
	return ids
}
