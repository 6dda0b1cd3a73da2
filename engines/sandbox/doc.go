// Package sandbox is Ensemble's own OS sandbox for a whole agent process, and the checks that say
// whether an agent's sandbox can run on this computer.
//
// Most agents confine their shell commands themselves (Claude Code's sandbox-runtime, Codex's,
// Cursor's and Copilot's); Ensemble gives those the run's paths. An agent with no sandbox of its
// own here (OpenCode, Grok Build, Kimi Code, Mistral Vibe, and Gemini CLI and Qwen Code off macOS)
// runs inside Ensemble's instead: bubblewrap on Linux, Seatbelt (sandbox-exec) on macOS, built from
// the same [engines.Sandbox], so every agent works under one policy.
//
// The policy is a list of paths, each with what may be done there. Where two rules cover one
// path, the one for the longer path wins: the run's folder inside Ensemble's data folder stays
// writable although the data folder is hidden, and ~/.ssh stays hidden inside a writable home.
//
// The agent's network is not confined here: the agent itself reaches its model. With the run's
// internet off, the judge refuses the network programs and fetches the agent asks to use.
package sandbox
