package judge

import (
	"path/filepath"
	"strings"
)

// zone is where a path lies, from harmless to always refused. A higher zone is more severe.
type zone uint8

const (
	zDevice  zone = iota // /dev/null, /dev/stdout …: not a file at all
	zInside              // the run folder
	zSkill               // an agent's skill folder: read in every mode
	zOutside             // anywhere else the person may let a run in
	zCode                // Ensemble's own code: refused for writes
	zStartup             // start-up files: refused for writes
	zSystem              // system folders: refused for writes (floor)
	zBoot                // how the computer boots and mounts: refused for writes (floor)
	zDisk                // a disk device: refused for writes (floor)
	zOther               // another account's files: always refused
	zProc                // other processes' memory and environment: always refused
	zSecret              // keys, sign-ins, browser data: always refused
	zData                // Ensemble's own data and helpers: always refused
)

func within(p, dir string) bool {
	if dir == "" || p == "" {
		return false
	}
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

func withinAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// devices a command may read and write freely.
var freeDevices = set("/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty",
	"/dev/random", "/dev/urandom", "/dev/full", "/dev/ptmx")

var diskPrefixes = []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "loop", "md", "dm-", "sr", "nbd", "zd", "mapper/", "disk/", "mtd", "ubi", "fd0", "fd1"}

func isDisk(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	rest := p[len("/dev/"):]
	for _, d := range diskPrefixes {
		if strings.HasPrefix(rest, d) {
			return true
		}
	}
	return false
}

// homeSecrets are keys, sign-ins and browser data under the home folder (SECRET_PATHS).
var homeSecrets = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json", ".netrc", ".npmrc",
	".pypirc", ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub", ".password-store",
	".vault-token", ".terraform.d/credentials.tfrc.json", ".cargo/credentials", ".cargo/credentials.toml",
	".gem/credentials", ".m2/settings-security.xml", ".config/op", ".op", ".local/share/keyrings",
	"Library/Keychains", ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
	".config/microsoft-edge", ".config/vivaldi", ".config/opera", "Library/Application Support/Google/Chrome",
	"Library/Application Support/Chromium", "Library/Application Support/Firefox",
	"Library/Application Support/BraveSoftware", "Library/Application Support/Microsoft Edge",
	"Library/Safari", "Library/Cookies", "Library/Containers/com.apple.Safari", ".codex/auth.json",
	".claude/.credentials.json", ".config/github-copilot", ".gemini/oauth_creds.json", ".config/rclone",
	".s3cfg", ".boto", ".config/doctl", ".pgpass", ".my.cnf", ".bash_history", ".zsh_history", ".history",
	".python_history", ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history",
	".lesshst", ".local/share/fish/fish_history", ".config/1Password", ".1password", ".ngrok2",
	".config/ngrok", ".oci", ".composer/auth.json", ".config/composer/auth.json", ".config/hcloud",
	".local/share/password-store", ".wallet", ".electrum", ".bitcoin/wallet.dat", ".ethereum/keystore",
}

// systemSecrets are password hashes and machine keys.
var systemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
	"/etc/master.passwd", "/private/etc/master.passwd", "/etc/ssl/private", "/etc/pki/tls/private",
	"/etc/security/opasswd", "/etc/krb5.keytab", "/var/lib/sss", "/etc/NetworkManager/system-connections",
	"/etc/wpa_supplicant", "/Library/Keychains", "/var/db/dslocal", "/private/var/db/dslocal",
	"/var/lib/docker", "/etc/docker/key.json",
}

// homeStartup are files that run when the person opens a shell, signs in or starts a tool, and the
// agents' own settings, which could plant hooks for the next run: refused for writes.
var homeStartup = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile", ".zshrc",
	".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login",
	".logout", ".config/fish", ".gitconfig", ".config/git", ".inputrc", ".xprofile", ".xinitrc", ".xsession",
	".xsessionrc", ".pam_environment", ".config/environment.d", ".config/autostart", ".config/systemd",
	".local/share/systemd", "Library/LaunchAgents", "Library/LaunchDaemons", ".config/plasma-workspace/env",
	".vimrc", ".exrc", ".config/nvim", ".emacs", ".emacs.d/init.el", ".tmux.conf", ".config/tmux",
	".direnvrc", ".config/direnv", ".oh-my-zsh/custom", ".claude/settings.json", ".claude/settings.local.json",
	".claude/hooks", ".claude.json", ".codex/config.toml", ".gemini/settings.json", ".cursor/mcp.json",
	".copilot/config.json", ".copilot/mcp-config.json", ".config/opencode", ".config/powershell",
}

// systemDirs are refused for writes; a recursive delete or permission change there is the floor.
var systemDirs = []string{
	"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/sys", "/proc", "/dev",
	"/var", "/run", "/System", "/Library", "/private/etc", "/private/var", "/snap", "/nix/store", "/efi",
}

// systemExceptions are inside systemDirs but are ordinary places to write.
var systemExceptions = []string{"/var/tmp", "/var/folders", "/private/var/folders", "/private/var/tmp", "/run/user", "/dev/shm", "/dev/fd", "/dev/pts"}

var bootPaths = []string{"/boot", "/efi", "/etc/fstab", "/etc/crypttab", "/etc/default/grub", "/etc/grub.d", "/etc/kernel", "/etc/initramfs-tools", "/etc/mkinitcpio.conf", "/etc/dracut.conf", "/etc/dracut.conf.d", "/System/Library/CoreServices/boot.efi"}

// secretName reports a file name that holds keys or sign-ins wherever it is.
func secretName(p string) bool {
	b := filepath.Base(p)
	switch b {
	case "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", ".netrc", "_netrc",
		".npmrc", ".pypirc", ".git-credentials", ".pgpass", "credentials", "credentials.json",
		"credentials.toml", ".htpasswd", ".vault-token", "auth.json", ".env", "secrets.json", "secrets.yaml", "secrets.yml", "master.key":
		return true
	}
	if strings.HasPrefix(b, ".env.") {
		switch strings.TrimPrefix(b, ".env.") {
		case "example", "sample", "template", "dist", "defaults", "schema":
			return false
		}
		return true
	}
	switch filepath.Ext(b) {
	case ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".ppk", ".p8":
		return true
	case ".pem":
		return !strings.Contains(p, "/certs/") && !strings.Contains(p, "ca-certificates") && !strings.Contains(b, "cacert") && !strings.Contains(b, "ca-bundle") && !strings.Contains(b, "chain")
	}
	return false
}

// accountHome reports whether p lies in some account's home folder, and which.
func accountHome(p string) (string, bool) {
	for _, root := range []string{"/home/", "/Users/"} {
		if strings.HasPrefix(p, root) {
			rest := p[len(root):]
			name, _, _ := strings.Cut(rest, "/")
			if name == "" || name == "Shared" || name == "linuxbrew" {
				return "", false
			}
			return root + name, true
		}
	}
	for _, h := range []string{"/root", "/var/root", "/private/var/root"} {
		if within(p, h) {
			return h, true
		}
	}
	return "", false
}

// classify says which zone an absolute, clean path is in.
func classify(p string, s *Settings) zone {
	if s.DataDir != "" && within(p, s.DataDir) && !(within(s.Folder, s.DataDir) && within(p, s.Folder) && s.Folder != s.DataDir) {
		return zData
	}
	if withinAny(p, s.Protected) {
		return zData
	}
	if within(p, "/proc") && procSensitive(p) || p == "/dev/mem" || p == "/dev/kmem" || p == "/dev/port" || p == "/dev/core" {
		return zProc
	}
	if within(p, "/dev") {
		switch {
		case p == "/dev":
			return zSystem
		case hasKey(freeDevices, p) || within(p, "/dev/fd") || within(p, "/dev/pts") || within(p, "/dev/shm"):
			return zDevice
		case isDisk(p):
			return zDisk
		}
		return zSystem
	}
	home := s.Home
	if home != "" && within(p, home) {
		rel := strings.TrimPrefix(p[len(home):], "/")
		for _, sp := range homeSecrets {
			if within(rel, sp) {
				return zSecret
			}
		}
	}
	if withinAny(p, systemSecrets) || strings.HasPrefix(p, "/etc/ssh/ssh_host_") && !strings.HasSuffix(p, ".pub") {
		return zSecret
	}
	inside := within(p, s.Folder)
	if !inside && secretName(p) {
		return zSecret
	}
	if h, ok := accountHome(p); ok && h != home && !within(home, h) && !inside {
		return zOther
	}
	if home != "" && within(p, home) {
		rel := strings.TrimPrefix(p[len(home):], "/")
		for _, sp := range homeStartup {
			if within(rel, sp) {
				return zStartup
			}
		}
	}
	if inside {
		return zInside
	}
	if withinAny(p, bootPaths) {
		return zBoot
	}
	if withinAny(p, systemDirs) && !withinAny(p, systemExceptions) || p == "/" {
		return zSystem
	}
	if withinAny(p, s.CodeDirs) {
		return zCode
	}
	if withinAny(p, s.SkillDirs) {
		return zSkill
	}
	return zOutside
}

func hasKey(m map[string]struct{}, k string) bool { _, ok := m[k]; return ok }

// critical is a folder whose recursive delete, move or permission change is the floor: the whole
// disk, the home folder or what holds the run folder, a top-level or system folder.
func critical(p string, s *Settings) (string, bool) {
	switch {
	case p == "/":
		return "the whole disk", true
	case s.Home != "" && within(s.Home, p):
		return "your home folder", true
	case within(s.Folder, p) && p != s.Folder:
		return "a folder holding the run folder", true
	case strings.Count(p, "/") == 1:
		return "a top-level system folder", true
	case withinAny(p, systemDirs) && !withinAny(p, systemExceptions):
		return "a system folder", true
	}
	if h, ok := accountHome(p); ok && h == p {
		return "an account's home folder", true
	}
	return "", false
}

// whyProc finishes a refusal of reading other processes.
const whyProc = "reads another process's memory, environment or files, where the keys and sign-ins of running programs (Ensemble's among them) are; a run may never do that."

// procEntries are what /proc/<pid>/ holds that gives another process's memory, environment, open
// files or folders away.
var procEntries = set("environ", "mem", "pagemap", "root", "cwd", "fd", "fdinfo", "map_files", "maps", "smaps",
	"smaps_rollup", "auxv", "syscall", "stack", "numa_maps", "exe", "task", "personality", "clear_refs", "coredump_filter")

// procSensitive reports a path into another process's /proc entry (any pid, a pattern or a part
// only known when the command runs), or the kernel's memory.
func procSensitive(p string) bool {
	rest := strings.TrimPrefix(p, "/proc")
	if rest == "" || rest == "/" {
		return false
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	switch parts[0] {
	case "kcore", "kmem", "mem":
		return true
	}
	self := parts[0] == "self" || parts[0] == "thread-self"
	pid := allDigits(parts[0]) || strings.ContainsAny(parts[0], "*?[") || strings.Contains(parts[0], unknown) || self
	if !pid || len(parts) < 2 {
		return false
	}
	entry := parts[1]
	if entry == "task" && len(parts) >= 4 {
		entry = parts[3] // /proc/<pid>/task/<tid>/<entry>
	}
	if strings.ContainsAny(entry, "*?[") || strings.Contains(entry, unknown) {
		return !self
	}
	if self {
		// Its own memory and environment are the program's own; but cwd and fd lead into folders
		// the judge cannot see from the path (root is followed by procAlias).
		return (entry == "cwd" || entry == "fd" && len(parts) > 3) && len(parts) > 2
	}
	return hasKey(procEntries, entry)
}

// procAlias follows /proc/self/root/… to the path it is (/proc/self/root/etc is /etc), so the zones
// judge where it leads.
func procAlias(p string) string {
	for _, pre := range []string{"/proc/self/root", "/proc/thread-self/root"} {
		if within(p, pre) {
			return filepath.Clean("/" + strings.TrimPrefix(p, pre))
		}
	}
	return p
}

// procPattern reports a path with patterns or unknown parts that may reach another process.
func (j *judgement) procPattern(p string) bool {
	return p != "" && within(p, "/proc") && procSensitive(p)
}
