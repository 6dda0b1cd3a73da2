package api

import (
	"net/http"
	"strconv"

	"github.com/ensemblework/ensemble/runtime/events"
)

// eventLog answers with one page of the event log, oldest first: up to ?limit= (at most
// sseBacklog) events after ?after= that ?kinds= and ?subject= select, as the stream's filter does.
// more says a next page follows. A client that follows the one stream reads with it what happened
// before it looked: the task page reads a run's trace from its start, then applies the stream's
// events of that run, skipping by seq what it already has.
func (s *Server) eventLog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := events.ParseFilter(q.Get("kinds"), q.Get("subject"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "The event filter is not valid: "+err.Error())
		return
	}
	after, limit := int64(0), sseBacklog
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			writeError(w, http.StatusBadRequest, "after is not a sequence number.")
			return
		}
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			writeError(w, http.StatusBadRequest, "limit is not a positive number.")
			return
		}
		limit = min(limit, sseBacklog)
	}
	evs, err := events.Select(r.Context(), s.store.Reader(), f, after, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if evs == nil {
		evs = []events.Event{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": evs, "more": len(evs) == limit})
}
