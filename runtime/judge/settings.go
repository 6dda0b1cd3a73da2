package judge

// Mode is how much a run may do without asking the person.
type Mode string

// The run modes. The zero Mode is treated as [ModeAsk], the most careful.
const (
	ModeAsk        Mode = "ask"        // Ask: changes and commands wait for the person
	ModeReview     Mode = "review"     // Review only: work inside the folder, review at the end
	ModeUnattended Mode = "unattended" // Run unattended
)

// Outside is how far a run may reach outside its folder.
type Outside string

// The outside-folder access levels. The zero Outside is treated as [OutsideRead].
const (
	OutsideNone      Outside = "none"      // No access: nothing outside the folder
	OutsideRead      Outside = "read"      // Read only: reading goes ahead, changes are refused
	OutsideReadWrite Outside = "readwrite" // Read and write: changes ask once per folder (Run unattended: allowed in the person's own folders)
)

// Git is the run's git permission.
type Git string

// The git permissions. The zero Git is treated as [GitLocal], the most careful.
const (
	GitLocal  Git = "local"  // Local only: no commits, merges, rebases or pushes
	GitCommit Git = "commit" // Commit: commits, but no pushes or pull requests
	GitAny    Git = "any"    // No limits: Ensemble adds no git limits of its own
)

// Settings are the run's settings and what the person already answered for this run.
//
// Paths must be absolute and clean. Folder, Home and DataDir should already be resolved through
// symlinks by the caller: the judge compares them lexically.
type Settings struct {
	Mode    Mode
	Folder  string // the run folder
	Trusted bool   // the person trusted this very folder by name
	Sandbox bool   // the agent's own OS sandbox confines its commands
	Outside Outside
	Git     Git
	// AskBeforeCommit is "Ask me before each commit": every commit is asked about, in every mode.
	AskBeforeCommit bool
	Internet        bool

	Home    string // the person's home folder: start-up files, secret paths, other accounts
	DataDir string // Ensemble's own data folder: always refused

	// Workspace is Ensemble's workspace folder; Run unattended may change it like the home folder.
	Workspace string
	// Writable are folders the run may always change, like its cache and temporary folder.
	Writable []string
	// SkillDirs are the agents' own skill folders: read in every mode, their scripts run as reads.
	SkillDirs []string
	// Protected are Ensemble's own helpers (its git helper, the hook): always refused.
	Protected []string
	// CodeDirs hold Ensemble's own code: refused for writes.
	CodeDirs []string

	// GitConfigClean says the run folder's repository config has no pager, diff or filter
	// driver, fsmonitor, hooks folder or include that runs code ([GitConfigClean]), which
	// read-only git needs to run without asking.
	GitConfigClean bool
	// GitCleanAt, if set, says the same of the repository a folder inside the run folder belongs
	// to (a repository nested in it has a config of its own). Nil: read-only git is quiet only in
	// the run folder itself.
	GitCleanAt func(dir string) bool

	// Runtime is the runtime's own address, host:port: its API and the runs' MCP servers. A run
	// may never call it, nor run Ensemble's client commands.
	Runtime string
	// Binary is Ensemble's own program, absolute: a run may not run it, but for `ensemble judge`.
	Binary string

	// Kept are the person's answers kept for this run.
	Kept Kept

	// Resolve, if set, follows symlinks in an absolute path (resolving the longest existing
	// prefix of a path that does not exist yet). Nil means paths are judged lexically.
	Resolve func(path string) (string, error)
	// Glob, if set, expands an absolute glob pattern to its matches. Nil means a glob is judged
	// by the folder it is rooted in.
	Glob func(pattern string) ([]string, error)
}

// Kept holds the answers the person gave "for this run".
type Kept struct {
	// Folders outside the run folder the person let this run change.
	Folders []string
	// Commands are command kinds allowed for this run, as [CommandKind] names them
	// ("npm run build", "git commit", "python3 scripts/gen.py").
	Commands []string
	// Edits lets edits anywhere in the run folder go ahead in Ask mode.
	Edits bool
	// Sites are hosts web fetches may reach without asking.
	Sites []string
	// Tools are MCP tools allowed for this run: "server/tool", "server/*", or the groups
	// "browser" and "capture".
	Tools []string
}

// Tool is the kind of a tool call.
type Tool string

// The kinds of tool calls the judge knows. Anything else is asked about.
const (
	ToolShell     Tool = "shell"      // a shell command line (Bash, execute, commandExecution)
	ToolRead      Tool = "read"       // reading files (Read, NotebookRead)
	ToolSearch    Tool = "search"     // searching files (Grep, Glob, LS)
	ToolEdit      Tool = "edit"       // changing files (Edit, Write, MultiEdit, fileChange)
	ToolFetch     Tool = "fetch"      // fetching a web address (WebFetch)
	ToolWebSearch Tool = "web_search" // searching the web (WebSearch)
	ToolMCP       Tool = "mcp"        // an MCP server's tool
)

// Call is one tool call to judge.
type Call struct {
	Tool    Tool
	Command string   // ToolShell: the command line, as the agent sends it
	Cwd     string   // ToolShell: the folder it runs in; empty means the run folder
	Paths   []string // ToolRead, ToolSearch, ToolEdit: the files or folders
	URL     string   // ToolFetch
	Server  string   // ToolMCP: the server's name ("ensemble" for Ensemble's own)
	Name    string   // ToolMCP: the tool's name
	// Unsandboxed marks a command retried outside the sandbox (dangerouslyDisableSandbox).
	Unsandboxed bool
}
