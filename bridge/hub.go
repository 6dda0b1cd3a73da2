package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/bridge/keyform"
)

// NotRunning is every tool's answer while the runtime is not running on this computer.
const NotRunning = "Ensemble is not running on this computer: start it with `ensemble serve` or open the Ensemble app, then try again."

// ConfigError is a bridge set up wrong (no key, or not a key): every tool says so, never an empty
// answer.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// APIError is a refusal from the runtime: its status and sentence.
type APIError struct {
	Status int
	Msg    string
	Body   map[string]any
}

func (e *APIError) Error() string { return e.Msg }

// errNotRunning is matched when no runtime answers.
var errNotRunning = errors.New(NotRunning)

// hub calls the runtime's /api/bridge routes with the key. It reads api.json before every call, so a
// runtime that restarted on another port keeps working.
type hub struct {
	dataDir string
	key     string
	http    *http.Client
}

// checkKey says what is wrong with the key, or nil.
func checkKey(key string) error {
	switch {
	case key == "":
		return &ConfigError{"ENSEMBLE_KEY is not set: make a key with `ensemble keys create NAME` and put it in the editor's environment as ENSEMBLE_KEY."}
	case keyform.IsLaunchToken(key):
		return &ConfigError{"ENSEMBLE_KEY holds the runtime's launch token, which the bridge never uses: make a key with `ensemble keys create NAME`."}
	case !keyform.Looks(key):
		return &ConfigError{"ENSEMBLE_KEY must be an Ensemble key starting with ens_: make one with `ensemble keys create NAME`."}
	}
	return nil
}

// baseURL reads the runtime's address from api.json (only the address: the launch token in it is
// the runtime's, not the bridge's).
func (h *hub) baseURL() (string, error) {
	b, err := os.ReadFile(filepath.Join(h.dataDir, "api.json"))
	if err != nil {
		return "", errNotRunning
	}
	var f struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(b, &f) != nil || f.URL == "" {
		return "", errNotRunning
	}
	return strings.TrimSuffix(f.URL, "/"), nil
}

// do sends one request and returns the answer's body; body is JSON (or nil).
func (h *hub) do(ctx context.Context, method, path, space string, body any) (json.RawMessage, error) {
	resp, err := h.open(ctx, method, path, space, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, errNotRunning
	}
	return raw, nil
}

// open sends one request and returns the response for a 2xx answer; the caller closes its body.
func (h *hub) open(ctx context.Context, method, path, space string, body any) (*http.Response, error) {
	if err := checkKey(h.key); err != nil {
		return nil, err
	}
	base, err := h.baseURL()
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+h.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if space != "" {
		req.Header.Set("X-Ensemble-Space", space)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errNotRunning
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		e := &APIError{Status: resp.StatusCode}
		json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e.Body)
		if msg, _ := e.Body["error"].(string); msg != "" {
			e.Msg = msg
		} else {
			e.Msg = fmt.Sprintf("Ensemble answered %s.", resp.Status)
		}
		return nil, e
	}
	return resp, nil
}

func newHub(dataDir, key string) *hub {
	return &hub{dataDir: dataDir, key: key, http: &http.Client{Timeout: 2 * time.Minute}}
}
