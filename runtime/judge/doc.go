// Package judge decides every tool call a coding agent or a node makes: allow it, refuse it with a
// reason, or ask the person on Needs me.
//
// [Decide] is a pure function of the call and the run's settings. It does no I/O of its own: the
// run's folder, home and data folder come in [Settings], and symlink resolution and glob expansion
// come in as optional functions, so the whole policy is tested as a table.
//
// # Order of the rules
//
//  1. The hard floor: dangerous commands (002 §8.13: wiping disks, deleting the system or the home
//     folder, fork bombs, curl | sh, …) and the never-programs (sudo, crontab, launchctl, …) are
//     refused in every mode, whatever the person answered before.
//  2. Zones: keys, sign-ins and browser data, other accounts' files, other processes' memory and
//     environment (/proc/<pid>/environ, gdb -p) and Ensemble's own data are refused for reads and
//     writes; start-up files, system folders and Ensemble's code for writes. A run may never drive
//     Ensemble itself: its client commands and the runtime's own address are refused.
//  3. The person's choices: git permission, internet, outside-folder access.
//  4. Quiet reads (ls, cat, grep, read-only git …, only inside the folder) run in every mode.
//  5. Everything else follows the mode: asked in Ask mode unless the folder is trusted, allowed in
//     Review only and Run unattended; outside-folder changes and remote programs ask in the
//     attended modes.
//
// # Shell commands
//
// A command line is read as bash reads it (mvdan.cc/sh/v3/syntax): quotes and escapes, `cd`
// changing the folder later relative paths resolve in, redirects as writes, pipelines and lists,
// subshells, functions, $(…) and backticks, here-documents, and wrappers (sudo, env, nohup,
// timeout, xargs, …) unwrapped to the program they run. `bash -c`, `eval` and friends are read
// again, to a limited depth. A line that cannot be read is asked about, or refused when it looks
// dangerous; the judge never panics.
//
// Words are expanded as bash expands them, as far as they can be known before the line runs:
// brace lists, tildes, HOME and PWD with their operators (${HOME%/}, ${HOME:0}), the variables
// the line sets, for loops over known words, and $(echo …) or $(printf …) of known words. What
// cannot be known is never read as a harmless name: a file named by it is asked about, and a
// delete whose known start is a critical folder (rm -rf ~/$X) is the floor. Links the line makes
// (ln -s ~ h) are followed like those on disk.
//
// # Options
//
// Each program the judge knows has a spec of its options (options.go, gitopts.go): which take
// a value, and whether that value is a file read or written, a folder, a program or a shell line
// it runs. Files named in options are judged like operands (grep -f, sort -o, tar -C, curl -F
// f=@FILE, jq --rawfile); programs and shell lines an option or a git config key runs are read
// as commands of their own (rg --pre, git -c core.pager=…, rebase -x, GIT_PAGER=…). A quiet read
// stays quiet only with options its spec knows to read nothing more.
package judge
