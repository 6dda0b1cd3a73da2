package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// Settings are the assistant's own settings. A turn that names no provider, model, base URL or
// effort takes them from here.
type Settings struct {
	Provider    string `json:"provider"` // "anthropic" or "openai"
	Model       string `json:"model"`    // "" until the person chooses one
	BaseURL     string `json:"baseUrl"`  // "" for the provider's own address
	Effort      string `json:"effort"`
	WritePolicy string `json:"writePolicy"` // Immediate (the default), Preview or NeedsMe
	// AllowedWriteAreas are the areas the assistant may change (spec 000 §7); a write tool of
	// another is neither offered nor run, and a held one is refused at Apply. All by default.
	AllowedWriteAreas []string `json:"allowedWriteAreas"`
}

// DefaultSettings are the settings before the person changes any.
func DefaultSettings() Settings {
	return Settings{Provider: "anthropic", WritePolicy: Immediate, AllowedWriteAreas: slices.Clone(writeAreas)}
}

// SettingsChange changes some settings: a field left out (nil) keeps its value, "" sets it back to
// its default.
type SettingsChange struct {
	Provider    *string `json:"provider"`
	Model       *string `json:"model"`
	BaseURL     *string `json:"baseUrl"`
	Effort      *string `json:"effort"`
	WritePolicy *string `json:"writePolicy"`
	// AllowedWriteAreas replaces the list; empty allows no writes.
	AllowedWriteAreas *[]string `json:"allowedWriteAreas"`
}

// fields are the rows of assistant_settings by key, each with the field it holds.
func (st *Settings) fields() map[string]*string {
	return map[string]*string{
		"provider": &st.Provider, "model": &st.Model, "baseUrl": &st.BaseURL,
		"effort": &st.Effort, "writePolicy": &st.WritePolicy,
	}
}

// apply returns st changed by c, checked; a setting that is not valid is an invalid problem.
func (c SettingsChange) apply(st Settings) (Settings, error) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	set(&st.Provider, c.Provider)
	set(&st.Model, c.Model)
	set(&st.BaseURL, c.BaseURL)
	set(&st.Effort, c.Effort)
	set(&st.WritePolicy, c.WritePolicy)
	def := DefaultSettings()
	if st.Provider == "" {
		st.Provider = def.Provider
	}
	if st.WritePolicy == "" {
		st.WritePolicy = def.WritePolicy
	}
	switch st.Provider {
	case "anthropic", "openai", "ollama":
	default:
		if !IsPlan(st.Provider) {
			return st, problem.Invalid("Provider %q is not one of anthropic, openai, ollama, claude-code, codex, opencode or gemini-cli.", st.Provider)
		}
	}
	if c.AllowedWriteAreas != nil {
		areas, err := checkAreas(*c.AllowedWriteAreas)
		if err != nil {
			return st, err
		}
		st.AllowedWriteAreas = areas
	}
	switch st.WritePolicy {
	case Immediate, Preview, NeedsMe:
	default:
		return st, problem.Invalid("Write policy %q is not one of immediate, preview or needs-me.", st.WritePolicy)
	}
	if n := utf8.RuneCountInString(st.Model); n > 200 {
		return st, problem.Invalid("The model's name is %d characters long; keep it under 200.", n)
	}
	if strings.IndexFunc(st.Effort, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) >= 0 || len(st.Effort) > 20 {
		return st, problem.Invalid("Effort %q is not a level such as low, medium or high.", st.Effort)
	}
	if p, ok := aiPlans[st.Provider]; ok {
		if err := p.checkEffort(st.Effort); err != nil {
			return st, problem.New(problem.KindInvalid, err.Error())
		}
	} else if st.Model != "" && st.Effort != "" {
		// The effort is the model's: one it does not take would be refused at every turn.
		if err := models.CheckEffort(st.Provider, st.Model, st.Effort); err != nil {
			return st, problem.New(problem.KindInvalid, err.Error())
		}
	}
	if st.BaseURL != "" {
		// The person's own setting may point anywhere (a hosted compatible server); only a turn's
		// request is held to this computer.
		u, err := url.Parse(st.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return st, problem.Invalid("Base URL %q is not an http(s) address such as http://127.0.0.1:11434/v1.", st.BaseURL)
		}
	}
	return st, nil
}

// fill gives req what it leaves empty from st. The model and base URL belong to the provider they
// were set for, so they fill only a request for that provider; the effort belongs to the model it
// was set for (or to any, when the settings name none), since another model may not take it.
func (st Settings) fill(req TurnRequest) TurnRequest {
	if req.Provider == "" {
		req.Provider = st.Provider
	}
	if req.Provider == st.Provider {
		if req.Model == "" {
			req.Model = st.Model
		}
		if req.BaseURL == "" {
			req.BaseURL = st.BaseURL
		}
		if req.Effort == "" && (st.Model == "" || req.Model == st.Model) {
			req.Effort = st.Effort
		}
	}
	return req
}

// areasKey is the assistant_settings row of the allowed write areas (a JSON list).
const areasKey = "allowedWriteAreas"

// Settings returns the assistant's settings.
func (s *Service) Settings(ctx context.Context) (Settings, error) {
	st := DefaultSettings()
	rows, err := s.cfg.Store.Reader().QueryContext(ctx, "SELECT key, value FROM assistant_settings")
	if err != nil {
		return st, fmt.Errorf("assistant: read settings: %w", err)
	}
	defer rows.Close()
	fields := st.fields()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return st, fmt.Errorf("assistant: read settings: %w", err)
		}
		if k == areasKey {
			// Kept as JSON; what no longer is an area is left out.
			var areas []string
			if err := json.Unmarshal([]byte(v), &areas); err == nil {
				st.AllowedWriteAreas = slices.DeleteFunc(areas, func(a string) bool { return !slices.Contains(writeAreas, a) })
			}
			continue
		}
		if f := fields[k]; f != nil && v != "" {
			*f = v
		}
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("assistant: read settings: %w", err)
	}
	return st, nil
}

// SetSettings changes the settings and returns them. A change that is not valid is an
// invalid problem and changes nothing.
func (s *Service) SetSettings(ctx context.Context, c SettingsChange) (Settings, error) {
	s.settingsMu.Lock() // read, change, write: two changes at once must not undo each other
	defer s.settingsMu.Unlock()
	cur, err := s.Settings(ctx)
	if err != nil {
		return cur, err
	}
	st, err := c.apply(cur)
	if err != nil {
		return cur, err
	}
	err = s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		areas, _ := json.Marshal(st.AllowedWriteAreas)
		rows := map[string]string{areasKey: string(areas)}
		for k, v := range st.fields() {
			rows[k] = *v
		}
		for k, v := range rows {
			if _, err := t.ExecContext(t.Context(), `INSERT INTO assistant_settings (key, value) VALUES (?, ?)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
				return fmt.Errorf("assistant: save settings: %w", err)
			}
		}
		return t.Emit(KindSettings, "", st)
	})
	if err != nil {
		return cur, err
	}
	return st, nil
}
