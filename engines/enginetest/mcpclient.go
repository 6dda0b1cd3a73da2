package enginetest

import "net/http"

// MCPClient is an HTTP client that sends headers (a run's MCP server's: its secret) on every
// request, as an agent set up with that server does; a stand-in agent connects with it.
func MCPClient(headers map[string]string) *http.Client {
	return &http.Client{Transport: headerTransport(headers)}
}

type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}
