// Package enginetest is a scripted model server: it answers the real
// coding-agent CLIs (Claude Code, Codex, opencode, Gemini CLI, Copilot and
// the ACP adapters) offline, in the model providers' own wire formats, with
// replies a test writes down in advance.
//
// # Wire formats
//
//   - Anthropic Messages: POST …/v1/messages (SSE and JSON),
//     POST …/v1/messages/count_tokens. Claude Code, claude-code-acp.
//   - OpenAI Responses: POST …/v1/responses (SSE and JSON). Codex, codex-acp.
//   - OpenAI Chat Completions: POST …/v1/chat/completions (SSE and JSON).
//     opencode, Copilot (BYOK).
//   - Gemini: POST …/v1beta/models/M:streamGenerateContent?alt=sse,
//     …:generateContent and …:countTokens. Gemini CLI.
//   - GET …/models (an OpenAI and Anthropic list in one body, or a Gemini list
//     under /v1beta), HEAD / and GET / (Claude Code probes the base URL).
//
// Routes match on the end of the path, so a base URL with or without /v1
// works. Anything else is answered 404 and still recorded, so a test sees
// what a new CLI version started calling.
//
// # Scripts
//
// A [Script] is a list of [Step]s, one per model request: text, thinking and
// text, tool calls, an HTTP error, a delay, a hang until the client goes
// away, or content that breaks off before the wire format's closing events
// ([Step.DropConnection], [Step.EndEarly]). Steps are consumed in order, across all endpoints: a request takes
// the first unconsumed step that accepts it (a step without [Match] accepts
// every main request). When the script runs out the server answers
// [ExhaustedText] and records it; [NewServer] fails the test for it.
//
//	s := enginetest.NewServer(t)
//	s.Script(
//		enginetest.ToolCall("Bash", map[string]any{"command": "ls"}),
//		enginetest.Say("All done."),
//	)
//
// [Shell] calls whichever shell tool the request offers (Bash, bash,
// exec_command, run_shell_command, …) with arguments built from its schema,
// so one script drives every CLI.
//
// # Side requests
//
// The CLIs make requests of their own besides the agent loop: Claude Code's
// quota probe, title and topic calls, opencode's title call, Gemini CLI's
// JSON-mode router and next-speaker checks. [Classify] recognises them by
// shape; they are answered without consuming a step (a step whose Match names
// the side request's kind answers it instead) and recorded with
// [Request.Side] set.
//
// # Another process
//
// The CLIs run in a loopback-only network namespace where the test process's
// own listener is unreachable. The same [Script], written as JSON, can be
// served by a re-executed test binary: call [MainHook] first in TestMain, and
// start the server with [ServerCommand] inside the namespace. It appends every
// request to a JSON-lines record that [ReadRecord] reads back.
//
// # Real CLIs, offline
//
// [InstallNPM] installs a pinned CLI from npm into a cache folder kept across
// runs, and [InLoopbackNamespace] re-executes the calling test inside a
// network namespace with only loopback up (unshare -n, as root), where the
// test starts its [Server] on 127.0.0.1 and drives the CLI. Both skip with
// the reason when they cannot work, and fail instead under CI=true
// ([CannotRun]).
package enginetest
