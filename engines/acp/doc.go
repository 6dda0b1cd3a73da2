// Package acp drives the coding agents that speak ACP, the Agent Client Protocol (JSON-RPC lines
// over stdio): Cursor's agent, GitHub Copilot, Gemini CLI, OpenCode, Qwen Code, Kimi Code, Mistral
// Vibe and Grok Build. One runner serves them all; a [Profile] holds what differs per agent (its
// program and command line, its environment, what it keeps out, how it signs in).
//
// # Usage
//
//	for _, d := range acp.Drivers(acp.WithLogger(log)) {
//		drivers[d.Name()] = d // "cursor", "copilot", "gemini", "opencode", …
//	}
//	run, err := drivers["opencode"].Start(ctx, engines.Spec{Folder: dir, Prompt: "Fix the tests"}, host)
//	res, err := run.Wait()
//
// A run starts the person's own program from the trusted PATH (see [agentproc.TrustedPath]) with
// pipes, in a process group of its own, and speaks ACP to it: initialize, authenticate where the
// agent keeps a stored sign-in, session/new (or session/load to continue a session) in the work
// folder with the run's MCP server, the model and thinking level from the session's own options,
// then session/prompt with the brief. Every session/request_permission goes to the host's judge and
// is answered allow-once or reject-once, never "always". Refused calls go back to the agent as the
// next prompt, at most [RefusalFollowUps] times. session/update becomes [engines.Event]s.
//
// A chat turn of Ensemble's assistant ([engines.Spec].Chat) starts the same way: its instructions
// lead a new session's first message (a resumed session has them already), its text also streams
// as [engines.EventDelta], and OpenCode is told to deny its own tools, so it offers its model only
// the run's MCP server's.
//
// The protocol side ([Serve]) takes an io.Writer and an io.Reader, so tests drive it over io.Pipe
// against a stand-in agent.
package acp
