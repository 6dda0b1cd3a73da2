package api

import (
	"errors"
	"net/http"
	"slices"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

// setSealedSecret saves a run secret whose value came sealed for this computer's key (spec 002
// §8.7.2): the form Settings shows, and the one a phone uses through the relay, so the value never
// travels in the clear inside the page's requests.
//
// The box must be bound to: this computer's key (kid, also as its deviceId: the runtime has no other
// id), the decisionId the page sends beside it (a fresh random id per save, so a box made for
// something else, such as a card, is not taken here), the secret named in the path, the request's
// own Origin (the guard has already checked it is this runtime's), and an expiry at most 15 minutes
// ahead. Each box is taken once (its nonce). A plain value is refused on this route.
func (s *Server) setSealedSecret(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Sealed     *secrets.Box `json:"sealed"`
		DecisionID string       `json:"decisionId"`
		Allow      []string     `json:"allow"`
		Value      *string      `json:"value"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	name := r.PathValue("name")
	origin := r.Header.Get("Origin")
	switch {
	case in.Value != nil:
		writeSealError(w, "seal_required", "This route takes only a sealed box, never a plain value; seal the value for this computer's key.")
		return
	case in.Sealed == nil:
		writeSealError(w, "seal_shape", "The request holds no sealed box; send {sealed, decisionId}.")
		return
	case in.DecisionID == "":
		writeSealError(w, "seal_decision", "The request names no decisionId; send the one sealed in the box.")
		return
	case origin == "":
		writeSealError(w, "seal_origin", "The request has no Origin; seal the value in Ensemble's own page.")
		return
	}
	// A name that cannot be saved is refused before the box is opened, so the box is not spent.
	if p := secrets.NameProblem(secrets.Run, name); p != "" {
		writeError(w, http.StatusBadRequest, p)
		return
	}
	v, ok := s.openSealed(w, r, *in.Sealed, secrets.Expect{DecisionID: in.DecisionID, Name: name, Origins: []string{origin}})
	if !ok {
		return
	}
	allow := v.Allow
	if len(in.Allow) > 0 {
		if len(allow) > 0 && !slices.Equal(allow, in.Allow) {
			writeSealError(w, "seal_allow", "The allowed origins sent beside the box differ from those sealed inside it; send them once.")
			return
		}
		allow = in.Allow
	}
	s.secretAnswer(w, r, s.opts.Secrets.Set(r.Context(), name, secrets.Run, v.Value, allow))
}

// openSealed opens a box sealed for this computer, bound to this computer's key as its device id
// and to what expect names; a refusal is answered with its code and sentence, and ok is false.
func (s *Server) openSealed(w http.ResponseWriter, r *http.Request, b secrets.Box, expect secrets.Expect) (secrets.Sealed, bool) {
	expect.DeviceID = s.opts.Secrets.SealKey().Kid
	v, err := s.opts.Secrets.Open(r.Context(), b, expect)
	var se *secrets.SealError
	switch {
	case errors.As(err, &se):
		writeSealError(w, se.Code, se.Msg)
		return secrets.Sealed{}, false
	case err != nil:
		s.fail(w, r, err)
		return secrets.Sealed{}, false
	}
	return v, true
}

func writeSealError(w http.ResponseWriter, code, msg string) {
	writeJSON(w, http.StatusBadRequest, errorBody{Error: msg, Code: code})
}
