package enginetest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// A script answers the agent loop in order; Claude Code's title request
// is answered on the side and uses no step.
func Example() {
	s := enginetest.New(enginetest.Script{Steps: []enginetest.Step{
		enginetest.Shell("ls"),                            // call the request's shell tool
		enginetest.Say("All done.").WhenLastUser("a.txt"), // once the tool result names a.txt
	}})
	if err := s.Start("127.0.0.1:0"); err != nil {
		panic(err)
	}
	defer s.Close()

	// Point the CLI here: ANTHROPIC_BASE_URL=s.URL, OPENAI base URL s.URL+"/v1", …
	body := `{"model":"claude-opus-4-8","stream":false,"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}],
		"messages":[{"role":"user","content":"list the files"}]}`
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.Contains(string(b), `"input":{"command":"ls"},"name":"Bash"`))
	fmt.Println(s.Remaining(), "step left")
	// Output:
	// true
	// 1 step left
}
