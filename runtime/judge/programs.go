package judge

import (
	"net/url"
	"regexp"
	"strings"
)

// neverPrograms are privilege, persistence, keychain and machine-control programs (isNeverProgram):
// refused in every mode. The phrase finishes "`prog` …, which a run may never do."
var neverPrograms = map[string]string{
	"sudo": "runs commands as the administrator", "doas": "runs commands as the administrator",
	"pkexec": "runs commands as the administrator", "run0": "runs commands as the administrator",
	"sudoedit": "edits files as the administrator", "su": "runs commands as another user",
	"runuser": "runs commands as another user", "sg": "runs commands as another group",
	"newgrp": "changes the user's group", "login": "signs in as another user",
	"chroot": "runs commands in another root folder", "nsenter": "enters other processes' namespaces",
	"crontab": "schedules programs to run later", "at": "schedules programs to run later",
	"batch": "schedules programs to run later", "atrm": "changes scheduled programs",
	"launchctl": "starts and schedules background services", "systemctl": "controls the computer's services",
	"service": "controls the computer's services", "update-rc.d": "changes which services start with the computer",
	"chkconfig": "changes which services start with the computer", "rc-update": "changes which services start with the computer",
	"rc-service": "controls the computer's services", "systemd-run": "starts programs as services",
	"loginctl": "controls sign-in sessions", "security": "reads and changes the keychain",
	"secret-tool": "reads saved passwords", "kwallet-query": "reads saved passwords", "keyctl": "reads the kernel's keys",
	"pass": "reads saved passwords", "gopass": "reads saved passwords", "op": "reads saved passwords",
	"bw": "reads saved passwords", "lpass": "reads saved passwords", "keepassxc-cli": "reads saved passwords",
	"osascript": "controls other apps on this computer", "xdotool": "types and clicks in other apps",
	"ydotool": "types and clicks in other apps", "cliclick": "types and clicks in other apps",
	"automator": "runs workflows that control other apps", "shortcuts": "runs shortcuts that control the computer",
	"pkill": "ends other programs by name", "killall": "ends other programs by name",
	"shutdown": "shuts the computer down", "reboot": "restarts the computer", "poweroff": "turns the computer off",
	"halt": "stops the computer", "init": "changes the system's run level", "telinit": "changes the system's run level",
	"mount": "mounts disks", "umount": "unmounts disks", "losetup": "attaches disk images as devices",
	"cryptsetup": "changes encrypted disks", "insmod": "loads kernel modules", "rmmod": "unloads kernel modules",
	"modprobe": "loads kernel modules", "kextload": "loads kernel extensions", "kextunload": "unloads kernel extensions",
	"kmutil": "changes kernel extensions", "csrutil": "changes System Integrity Protection",
	"spctl": "changes which apps may run", "tccutil": "changes apps' privacy permissions",
	"nvram": "changes the computer's firmware settings", "systemsetup": "changes system settings",
	"profiles": "installs configuration profiles", "fdesetup": "changes disk encryption",
	"setcap": "gives programs administrator powers", "setenforce": "changes SELinux enforcement",
	"auditctl": "changes the system audit", "dseditgroup": "changes accounts' groups",
}

// neverReadVerbs are the read-only uses of some never-programs, which follow the mode instead.
var neverReadVerbs = map[string][]string{
	"systemctl": {"status", "show", "cat", "list-units", "list-unit-files", "list-timers", "list-sockets", "list-dependencies", "is-active", "is-enabled", "is-failed", "help", "--version", "-h", "--help"},
	"loginctl":  {"list-sessions", "list-users", "show-session", "show-user", "session-status", "user-status"},
	"service":   {"--status-all"},
	"security":  {"find-certificate", "verify-cert", "cms"},
}

// settingsPrograms change system settings only in some uses.
func settingsWrite(c *command) (string, bool) {
	a := c.args
	switch c.prog {
	case "gpg", "gpg2":
		for _, w := range a[1:] {
			switch w.val {
			case "--export-secret-keys", "--export-secret-subkeys", "--export-ssh-key", "--export-secret-key", "--export-options", "--passwd", "--delete-secret-keys":
				return "reads or changes your private keys", true
			}
		}
	case "defaults":
		if len(a) > 1 {
			switch a[1].val {
			case "write", "delete", "import", "rename":
				return "changes system and app settings", true
			}
		}
	case "sysctl":
		for _, w := range a[1:] {
			if w.val == "-w" || strings.Contains(w.val, "=") || w.val == "-p" || w.val == "--system" {
				return "changes the kernel's settings", true
			}
		}
	case "pmset":
		if len(a) > 1 && a[1].val != "-g" {
			return "changes power settings", true
		}
	case "scutil":
		if hasFlag(a, "", "set") {
			return "changes network and computer names", true
		}
	case "networksetup":
		for _, w := range a[1:] {
			if strings.HasPrefix(w.val, "-set") || strings.HasPrefix(w.val, "-create") || strings.HasPrefix(w.val, "-remove") || strings.HasPrefix(w.val, "-delete") {
				return "changes network settings", true
			}
		}
	case "diskutil":
		if len(a) > 1 {
			switch a[1].val {
			case "list", "info", "activity", "listFilesystems", "apfs":
				if a[1].val != "apfs" || len(a) > 2 && (a[2].val == "list" || a[2].val == "listSnapshots") {
					return "", false
				}
			}
		}
		return "changes disks", true
	case "softwareupdate":
		if !hasFlag(a, "l", "list", "history") {
			return "installs system updates", true
		}
	case "hostname", "hostnamectl", "timedatectl", "localectl":
		if c.prog == "hostname" && len(a) > 1 && !strings.HasPrefix(a[1].val, "-") || c.prog != "hostname" && len(a) > 1 && strings.HasPrefix(a[1].val, "set-") {
			return "changes system settings", true
		}
	}
	return "", false
}

// remotePrograms reach another computer (isRemoteProgram).
var remotePrograms = set("ssh", "scp", "sftp", "nc", "ncat", "netcat", "telnet", "ftp", "rsh", "rlogin",
	"mosh", "socat", "sshpass", "autossh", "ssh-copy-id", "lftp", "tftp", "rsync")

// webPrograms fetch from the web.
var webPrograms = set("curl", "wget", "fetch", "http", "https", "xh", "aria2c", "lynx", "w3m", "links", "elinks", "httpie", "curlie")

func downloads(c *command) bool {
	if hasKey(webPrograms, c.prog) {
		return true
	}
	switch c.prog {
	case "nc", "ncat", "netcat", "socat", "telnet":
		return true
	}
	return false
}

// readOnlyPrograms read but are never quiet (pagers, tools reading a project config that can set
// a pager, sed, curl); their operands are reads, not writes (readsOnly).
var readOnlyPrograms = set("less", "more", "most", "bat", "batcat", "ack", "ag", "sed", "awk", "gawk", "mawk",
	"curl", "wget", "view", "man", "info", "ps", "top", "htop", "df", "free", "uptime", "env", "printenv",
	"lsof", "netstat", "ss", "ip", "ifconfig", "dig", "nslookup", "host", "ping", "traceroute", "yq",
	"zcat", "zless", "bzcat", "xzcat", "base64", "lsblk", "blkid", "mdls", "mdfind",
	"plutil", "identify", "exiftool", "pdftotext")

// noPathPrograms take no file names as operands.
var noPathPrograms = set("echo", "printf", "true", "false", "test", "[", "basename", "dirname", "which",
	"type", "whoami", "id", "date", "uname", "pwd", "sleep", "seq", "nproc", "arch", "tty", "locale",
	"getconf", "expr", "whereis", "command", "hash", "help", "export", "unset", "set", "shopt", "alias",
	"unalias", "trap", "exit", "return", "read", "wait", "jobs", "fg", "bg", "disown", "kill", "ps",
	"uptime", "free", "printenv", "env", "yes", "ping", "dig", "nslookup", "host", "traceroute",
	"tr", "hostname", "logname", "users", "who", "w", "groups", "umask", "ulimit", "times", "getopts",
	"local", "declare", "typeset", "readonly", "let", "caller", "popd", "dirs", "history", "fc", "bind", "complete",
	"ensemble")

// patternFirst programs take a pattern, script or filter as their first operand, unless one
// comes with an option (-e, -f).
var patternFirst = map[string]string{
	"grep": "ef", "egrep": "ef", "fgrep": "ef", "rg": "ef", "ag": "", "ack": "", "sed": "ef", "jq": "f",
	"yq": "", "awk": "f", "gawk": "f", "mawk": "f", "look": "",
}

// optsWithValue are short options (letters) and long options that take a value, for programs
// without a spec in optionSpecs, so their values are not read as file names.
var optsWithValue = map[string]struct {
	short string
	long  []string
}{
	"git":   {"mFCcbBnSuUoO", []string{"message", "file", "author", "date", "format", "pretty", "grep", "since", "until", "after", "before", "depth", "branch", "origin", "template", "reference", "upload-pack", "exec", "jobs", "max-count", "skip", "committer", "reuse-message", "reedit-message", "fixup", "squash", "cleanup", "trailer", "strategy", "strategy-option", "onto", "exec-path", "git-dir", "work-tree", "namespace", "config-env", "separate-git-dir", "filter", "shallow-since", "shallow-exclude", "push-option", "receive-pack", "repo", "set-upstream-to", "sort", "contains", "merged", "no-merged", "points-at", "abbrev", "decorate-refs", "decorate-refs-exclude", "encoding", "word-diff", "word-diff-regex", "color-words", "diff-filter", "relative", "src-prefix", "dst-prefix", "line-prefix", "output", "stat", "unified", "inter-hunk-context", "find-renames", "find-copies", "break-rewrites", "dirstat", "anchored", "diff-algorithm", "ignore-submodules", "submodule", "template", "contents", "ignore-rev", "ignore-revs-file", "output-directory", "pathspec-from-file", "extcmd", "tool", "open-files-in-pager", "rebase-merges", "exclude-from", "exclude-per-directory", "exclude"}},
	"chmod": {"", []string{"reference"}},
	"chown": {"", []string{"reference", "from"}},
	"chgrp": {"", []string{"reference"}},
	"dd":    {"", nil},
	"find":  {"", nil},
}

// isLoopbackURL reports a web address on this computer.
func isLoopbackURL(raw string) bool {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "127.0.0.1" || h == "::1" || strings.HasPrefix(h, "127.") || strings.HasSuffix(h, ".localhost")
}

// urlHost is the host of a web address, or "".
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Hostname()
}

var dangerSmell = regexp.MustCompile(`(?i)(rm\s+-[a-z]*r[a-z]*\s+(/|~|\$home)|mkfs|:\(\)\s*\{|dd\s+.*of=/dev/|>\s*/dev/(sd|nvme|disk|hd|mmcblk)|(curl|wget)[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh|chmod\s+-r|shutdown|reboot|\bsudo\b|\bdoas\b)`)

// smellsDangerous is a last look at a line the parser could not read.
func smellsDangerous(text string) bool { return dangerSmell.MatchString(text) }
