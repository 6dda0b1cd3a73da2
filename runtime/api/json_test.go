package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ensemblework/ensemble/runtime/httpin"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
)

// TestWriteErr: a problem's kind picks the status and its sentence is the answer, however it was
// wrapped; anything else is a 500 that says nothing of the cause.
func TestWriteErr(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	for _, c := range []struct {
		name   string
		err    error
		status int
		msg    string
	}{
		{"invalid", problem.Invalid("Say a name."), 400, "Say a name."},
		{"not found, wrapped", fmt.Errorf("profiles: find: %w", problem.NotFound("There is no run profile %q.", "x")), 404, `There is no run profile "x".`},
		{"conflict", problem.Conflict("The run has already ended (done)."), 409, "The run has already ended (done)."},
		{"forbidden", problem.Forbidden("This key may not write."), 403, "This key may not write."},
		{"too many", problem.TooMany("Wait a minute."), 429, "Wait a minute."},
		{"unavailable", problem.Unavailable("No model is set up."), 503, "No model is set up."},
		{"a refused move", &records.MoveError{From: records.Done, To: records.Blocked}, 409, (&records.MoveError{From: records.Done, To: records.Blocked}).Error()},
		{"httpin's own status", &httpin.Error{Status: 415, Msg: "Send JSON."}, 415, "Send JSON."},
		{"a failure inside", errors.New("disk I/O error"), 500, "Something went wrong inside Ensemble; its log has the details."},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			s.writeErr(w, httptest.NewRequest(http.MethodGet, "/api/x", nil), c.err)
			var body errorBody
			json.Unmarshal(w.Body.Bytes(), &body)
			if w.Code != c.status || body.Error != c.msg {
				t.Errorf("got %d %q, want %d %q", w.Code, body.Error, c.status, c.msg)
			}
		})
	}
}
