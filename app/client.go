package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// client talks to the running runtime found through api.json.
type client struct {
	f    apiFile
	http *http.Client
}

// connect finds the runtime for the data folder in g.
func connect(ctx context.Context, g *globals) (*client, error) {
	dir, err := dataDir(g.data)
	if err != nil {
		return nil, err
	}
	f, err := readAPIFile(dir)
	if errors.Is(err, errNotRunning) {
		return nil, fmt.Errorf("Ensemble is not running for %s; start it with `ensemble serve`", dir)
	}
	if err != nil {
		return nil, err
	}
	return &client{f: f, http: httpClient()}, nil
}

func httpClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

// apiError is an error answer from the runtime: its sentence.
type apiError struct {
	Status  int
	Message string   `json:"error"`
	Allowed []string `json:"allowed"`
}

func (e *apiError) Error() string { return e.Message }

// do sends a request with body (JSON, or nil) and decodes the answer into out (or ignores it).
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.f.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.f.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("Ensemble is not answering at %s (it may have stopped; start it with `ensemble serve`): %w", c.f.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return responseError(resp)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// responseError is the sentence of a refused request: the runtime's own, else its status.
func responseError(resp *http.Response) error {
	e := &apiError{Status: resp.StatusCode}
	if json.NewDecoder(resp.Body).Decode(e) != nil || e.Message == "" {
		e.Message = fmt.Sprintf("Ensemble answered %s", resp.Status)
	}
	return e
}
