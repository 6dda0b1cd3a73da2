// Package httpin checks what a request brings to the runtime's own HTTP servers, the local API and
// the context bridge's Streamable HTTP (`ensemble mcp --http`), so both take the same things and
// refuse the same things with the same sentence: the Host and Origin headers (a web page must not
// drive them), the bearer credential, and the JSON body.
//
// A refusal is an [*Error]: its status and one sentence a person can act on.
package httpin

// Error is a request refused: the status to answer with and the sentence to say.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }
