package judge

import (
	"strings"
)

// The floor's reasons (002 §8.13), each ending with what the person can do.
const (
	whyOwn       = " Run it yourself in your own terminal if you mean it."
	whyDelete    = "deletes the operating system or every file you own, beyond recovery."
	whyDisk      = "erases a disk or its partition table."
	whyRawDisk   = "writes straight to a disk device, which destroys its file systems."
	whyPower     = "shuts down, restarts or suspends the computer, cutting off your work and Ensemble itself."
	whyFork      = "is a fork bomb: it makes processes until the computer stops responding."
	whyPerms     = "changes the owner or permissions of the whole disk, your home folder or a system folder, which breaks the system and sign-in and is hard to undo."
	whyAccounts  = "changes accounts, passwords or who may use sudo, which can lock you out of your own computer."
	whyBoot      = "changes how the computer boots or mounts its disks; a mistake leaves it unbootable."
	whyKillAll   = "kills every process or the system's own, ending the session, the desktop or the system."
	whyNetwork   = "cuts the computer off the network or remote access, so you (and Ensemble) can lose access to it."
	whyPackages  = "removes a package the system needs, or forces a removal, which breaks the system."
	whySystem    = "moves, empties or overwrites the system's own folders and files, and the system stops working."
	whyCron      = "deletes every scheduled job at once, with no undo."
	whyAdminSh   = "opens an administrator shell; approve one exact command instead, so you see what runs as the administrator."
	whyCurlSh    = "runs a script from the internet unseen; download the script, read what it does, then run the file."
	whyAdminKeys = "reads keys, password hashes or another account's files as the administrator; keys never leave their files through a run."
)

type floorHit struct{ why, rule string }

// floor checks one command against the dangerous-command table.
func (j *judgement) floor(c *command) (floorHit, bool) {
	p := c.prog
	a := c.args
	if c.adminShell {
		return floorHit{whyAdminSh, "floor.admin-shell"}, true
	}
	switch {
	case p == "rm" || p == "grm":
		rec := hasFlag(a, "rR", "recursive")
		for _, o := range operands(c) {
			if w, ok := j.criticalWord(c, o); ok && (rec || w == "the whole disk") {
				return floorHit{whyDelete, "floor.rm"}, true
			}
		}
	case p == "find" && c.findDelete:
		for _, ac := range findAccess(c) {
			if ac.write {
				if _, ok := j.criticalWord(c, ac.w); ok {
					return floorHit{whyDelete, "floor.rm"}, true
				}
			}
		}
	case p == "fd" || p == "fdfind":
		// fd PATTERN PATH… -x rm: deletes what it finds, as find -delete does.
		if pa := c.opts(); pa != nil && len(pa.rest) > 0 && pa.rest[0].known && findDeleters[progName(pa.rest[0].val)] {
			paths := pa.ops
			if len(paths) > 0 {
				paths = paths[1:]
			}
			if len(paths) == 0 {
				paths = []word{lit(".")}
			}
			for _, w := range paths {
				if _, ok := j.criticalWord(c, w); ok {
					return floorHit{whyDelete, "floor.rm"}, true
				}
			}
		}
	case p == "shred" || p == "gshred" || p == "truncate" || p == "gtruncate":
		// Overwriting (and with -u removing) every file of the home folder or the disk.
		for _, o := range operands(c) {
			if w, ok := j.criticalWord(c, o); ok && (o.glob || !o.known || w == "the whole disk" || w == "your home folder") {
				return floorHit{whyDelete, "floor.rm"}, true
			}
		}
	case isTar(p) && hasFlag(a, "", "remove-files"):
		// tar --remove-files deletes what it archives.
		for _, o := range operands(c) {
			if _, ok := j.criticalWord(c, o); ok {
				return floorHit{whyDelete, "floor.rm"}, true
			}
		}
	case p == "rsync" && (rsyncDeletes(a) || hasFlag(a, "", "remove-source-files")):
		// rsync --delete makes the destination hold only what the source has: onto the home folder
		// or a system folder, it deletes the rest.
		ops := operands(c)
		if len(ops) > 0 {
			if _, ok := j.criticalWord(c, ops[len(ops)-1]); ok {
				return floorHit{whyDelete, "floor.rm"}, true
			}
		}
		if hasFlag(a, "", "remove-source-files") {
			for _, o := range ops[:max(len(ops)-1, 0)] {
				if _, ok := j.criticalWord(c, o); ok {
					return floorHit{whyDelete, "floor.rm"}, true
				}
			}
		}
	case p == "setfacl" || p == "chacl":
		rec := hasFlag(a, "R", "recursive")
		for _, o := range operands(c) {
			if w, ok := j.criticalWord(c, o); ok && (rec || w == "the whole disk" || w == "your home folder") {
				return floorHit{whyPerms, "floor.perms"}, true
			}
		}
	case p == "chattr" || p == "chflags":
		rec := hasFlag(a, "R", "")
		ops := operands(c)
		if len(ops) > 0 {
			ops = ops[1:]
		}
		for _, o := range ops {
			if w, ok := j.criticalWord(c, o); ok && (rec || w == "the whole disk" || w == "your home folder") {
				return floorHit{whyPerms, "floor.perms"}, true
			}
		}
	case p == "mkfs" || strings.HasPrefix(p, "mkfs.") || p == "mke2fs" || p == "mkswap" || p == "mkdosfs" || p == "mkntfs" || strings.HasPrefix(p, "newfs") || p == "wipefs" || p == "blkdiscard" || p == "cfdisk" || p == "gdisk":
		return floorHit{whyDisk, "floor.disk"}, true
	case p == "fdisk" || p == "sfdisk" || p == "parted" || p == "sgdisk":
		if !hasFlag(a, "lpd", "list", "print", "dump") && !(p == "parted" && len(a) > 2 && a[len(a)-1].val == "print") {
			return floorHit{whyDisk, "floor.disk"}, true
		}
	case p == "diskutil" && len(a) > 1 && (strings.HasPrefix(strings.ToLower(a[1].val), "erase") || strings.HasPrefix(a[1].val, "partition") || a[1].val == "zeroDisk" || a[1].val == "randomDisk" || a[1].val == "secureErase" || a[1].val == "reformat"):
		return floorHit{whyDisk, "floor.disk"}, true
	case p == "shutdown" || p == "reboot" || p == "poweroff" || p == "halt" || p == "kexec":
		return floorHit{whyPower, "floor.power"}, true
	case p == "init" || p == "telinit":
		return floorHit{whyPower, "floor.power"}, true
	case p == "systemctl" || p == "loginctl":
		for _, w := range a[1:] {
			switch w.val {
			case "reboot", "poweroff", "halt", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "kexec", "isolate", "rescue", "emergency", "default", "soft-reboot":
				return floorHit{whyPower, "floor.power"}, true
			}
		}
	case p == "pmset" && len(a) > 1 && (a[1].val == "sleepnow" || a[1].val == "restart" || a[1].val == "shutdown"):
		return floorHit{whyPower, "floor.power"}, true
	case p == "chmod" || p == "chown" || p == "chgrp":
		rec := hasFlag(a, "R", "recursive")
		ops := operands(c)
		if !hasFlag(a, "", "reference") && len(ops) > 0 {
			ops = ops[1:]
		}
		for _, o := range ops {
			if w, ok := j.criticalWord(c, o); ok && (rec || w == "the whole disk" || w == "your home folder") {
				return floorHit{whyPerms, "floor.perms"}, true
			}
		}
	case p == "passwd" || p == "chpasswd" || p == "userdel" || p == "deluser" || p == "useradd" || p == "adduser" || p == "usermod" || p == "groupadd" || p == "groupdel" || p == "groupmod" || p == "delgroup" || p == "addgroup" || p == "gpasswd" || p == "visudo" || p == "vipw" || p == "vigr" || p == "chage" || p == "chsh" || p == "chfn" || p == "sysadminctl" || p == "newusers" || p == "pwconv" || p == "grpconv":
		return floorHit{whyAccounts, "floor.accounts"}, true
	case p == "dscl":
		for _, w := range a[1:] {
			switch w.val {
			case "-create", "-delete", "-passwd", "-append", "-change", "-merge":
				return floorHit{whyAccounts, "floor.accounts"}, true
			}
		}
	case p == "grub-install" || p == "grub2-install" || p == "grub-mkconfig" || p == "grub2-mkconfig" || p == "update-grub" || p == "update-grub2" || p == "update-initramfs" || p == "mkinitcpio" || p == "dracut" || p == "kernel-install" || p == "bless":
		return floorHit{whyBoot, "floor.boot"}, true
	case p == "efibootmgr":
		for _, w := range a[1:] {
			if w.val != "-v" && w.val != "--verbose" {
				return floorHit{whyBoot, "floor.boot"}, true
			}
		}
	case p == "bootctl":
		if len(a) > 1 && a[1].val != "status" && a[1].val != "list" && a[1].val != "--help" {
			return floorHit{whyBoot, "floor.boot"}, true
		}
	case p == "kill":
		if killsAll(a) {
			return floorHit{whyKillAll, "floor.kill"}, true
		}
	case p == "killall5":
		return floorHit{whyKillAll, "floor.kill"}, true
	case p == "pkill" || p == "killall":
		for i, w := range a[1:] {
			v := w.val
			if (v == "-u" || v == "-U" || v == "--euid" || v == "--uid" || v == "--user") && i+2 < len(a) && (a[i+2].val == "root" || a[i+2].val == "0") {
				return floorHit{whyKillAll, "floor.kill"}, true
			}
			switch strings.TrimPrefix(v, "^") {
			case "systemd", "init", "launchd", "kernel_task", "loginwindow", "WindowServer", "sshd", "Xorg", "gnome-shell", "kwin", "kwin_x11", "kwin_wayland", "dbus-daemon", "plasmashell", "gdm", "gdm3", "sddm", "lightdm", "login", "bash", "zsh", "sh", "ensemble":
				return floorHit{whyKillAll, "floor.kill"}, true
			}
		}
	case p == "iptables" || p == "ip6tables" || p == "iptables-legacy" || p == "iptables-nft" || p == "ip6tables-legacy" || p == "ebtables" || p == "arptables":
		for _, w := range a[1:] {
			switch w.val {
			case "-L", "--list", "-S", "--list-rules", "-n", "--numeric", "-v", "--verbose", "-x", "--exact", "--line-numbers", "-t", "--table", "filter", "nat", "mangle", "raw", "security", "-w", "--wait", "-h", "--help", "-V", "--version":
				continue
			}
			if !strings.HasPrefix(w.val, "-") {
				continue
			}
			return floorHit{whyNetwork, "floor.network"}, true
		}
	case p == "nft":
		ops := operands(c)
		if len(ops) == 0 || ops[0].val != "list" {
			if len(ops) > 0 || hasFlag(a, "f", "file") {
				return floorHit{whyNetwork, "floor.network"}, true
			}
		}
	case p == "ufw":
		if len(a) > 1 && a[1].val != "status" && a[1].val != "show" && a[1].val != "app" && a[1].val != "version" && a[1].val != "--help" {
			return floorHit{whyNetwork, "floor.network"}, true
		}
	case p == "firewall-cmd":
		for _, w := range a[1:] {
			if !strings.HasPrefix(w.val, "--list") && !strings.HasPrefix(w.val, "--get") && !strings.HasPrefix(w.val, "--query") && w.val != "--state" && !strings.HasPrefix(w.val, "--zone") {
				return floorHit{whyNetwork, "floor.network"}, true
			}
		}
	case p == "pfctl":
		if !hasFlag(a, "s", "") || hasFlag(a, "dFfeEkK", "") {
			return floorHit{whyNetwork, "floor.network"}, true
		}
	case p == "ip":
		if ipCutsOff(a) {
			return floorHit{whyNetwork, "floor.network"}, true
		}
	case p == "ifconfig":
		for _, w := range a[1:] {
			if w.val == "down" {
				return floorHit{whyNetwork, "floor.network"}, true
			}
		}
	case p == "ifdown" || p == "route" && len(a) > 1 && (a[1].val == "del" || a[1].val == "delete" || a[1].val == "flush" || a[1].val == "-n" && len(a) > 2 && (a[2].val == "delete" || a[2].val == "flush")):
		return floorHit{whyNetwork, "floor.network"}, true
	case p == "nmcli":
		s := joinVals(a[1:])
		if strings.Contains(s, "networking off") || strings.Contains(s, "radio") && strings.HasSuffix(s, " off") || strings.Contains(s, " down") || strings.Contains(s, "disconnect") || strings.Contains(s, " delete") {
			return floorHit{whyNetwork, "floor.network"}, true
		}
	case p == "networksetup":
		for _, w := range a[1:] {
			if w.val == "off" || strings.HasPrefix(w.val, "-setnetworkserviceenabled") && a[len(a)-1].val == "off" || strings.HasPrefix(w.val, "-remove") || strings.HasPrefix(w.val, "-delete") {
				return floorHit{whyNetwork, "floor.network"}, true
			}
		}
	case p == "rfkill" && len(a) > 1 && a[1].val == "block":
		return floorHit{whyNetwork, "floor.network"}, true
	case p == "apt" || p == "apt-get" || p == "aptitude" || p == "dnf" || p == "yum" || p == "microdnf" || p == "zypper" || p == "pacman" || p == "apk" || p == "dpkg" || p == "rpm" || p == "snap" || p == "emerge" || p == "xbps-remove" || p == "pkg" || p == "port":
		if removesSystem(c) {
			return floorHit{whyPackages, "floor.packages"}, true
		}
	case p == "mv" || p == "gmv":
		ops := operands(c)
		if _, ok := optValue(a, 't', "target-directory"); !ok && len(ops) > 0 {
			ops = ops[:len(ops)-1]
		}
		for _, o := range ops {
			if _, ok := j.criticalWord(c, o); ok {
				return floorHit{whySystem, "floor.system"}, true
			}
		}
	case p == "crontab":
		if hasFlag(a, "r", "") {
			return floorHit{whyCron, "floor.cron"}, true
		}
	}
	return floorHit{}, false
}

func joinVals(ws []word) string {
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.val)
	}
	return b.String()
}

// killsAll reports kill aimed at every process (-1) or at init (1).
func killsAll(a []word) bool {
	sig := false
	pids := false
	for i := 1; i < len(a); i++ {
		v := a[i].val
		switch {
		case pids:
			if v == "-1" || v == "1" {
				return true
			}
		case v == "--":
			pids = true
		case v == "-l" || v == "-L" || v == "--list" || v == "--table":
			return false
		case v == "-s" || v == "-n" || v == "--signal":
			i++
			sig = true
		case strings.HasPrefix(v, "-") && !sig:
			sig = true
		case v == "-1" || v == "1":
			return true
		case strings.HasPrefix(v, "-"):
			// a second dash word is a process group
			if v == "-1" {
				return true
			}
		}
	}
	return false
}

func ipCutsOff(a []word) bool {
	s := " " + joinVals(a[1:]) + " "
	for _, pat := range []string{" link set ", " l set ", " l s ", " link s "} {
		if strings.Contains(s, pat) && strings.Contains(s, " down ") {
			return true
		}
	}
	for _, obj := range []string{"addr", "a", "address", "route", "r", "ro", "link", "l", "rule"} {
		for _, verb := range []string{"flush", "del", "delete", "f"} {
			if strings.HasPrefix(s, " "+obj+" "+verb+" ") || strings.Contains(s, " "+obj+" "+verb+" ") {
				return true
			}
		}
	}
	return false
}

// systemPackages are packages a system cannot do without.
var systemPackages = set("systemd", "systemd-sysv", "sudo", "libc6", "libc-bin", "glibc", "glibc-common",
	"bash", "dash", "coreutils", "util-linux", "apt", "dpkg", "dnf", "yum", "rpm", "pacman", "zypper",
	"apk-tools", "init", "sysvinit", "sysvinit-core", "upstart", "linux", "linux-generic", "kernel",
	"kernel-core", "login", "passwd", "base-files", "base-passwd", "pam", "openssh-server", "network-manager",
	"networkmanager", "netplan.io", "ubuntu-desktop", "gnome-shell", "xorg", "plasma-desktop", "gdm3",
	"sddm", "lightdm", "busybox", "musl", "python3", "perl-base", "sed", "grep", "findutils",
	"e2fsprogs", "mount", "procps", "filesystem", "libgcc-s1", "zlib1g", "tar", "gzip", "ubuntu-minimal",
	"ubuntu-standard", "debianutils", "ncurses-base", "bsdutils", "diffutils", "hostname", "shadow", "shadow-utils")

func isSystemPackage(name string) bool {
	name = strings.ToLower(name)
	if i := strings.IndexAny(name, "=:<>"); i > 0 {
		name = name[:i]
	}
	if hasKey(systemPackages, name) {
		return true
	}
	for _, pre := range []string{"linux-image", "grub", "shim", "libpam", "libc6", "systemd", "xserver-xorg", "kernel-", "linux-firmware"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

// removesSystem reports a package removal of something the system needs, or a forced removal.
func removesSystem(c *command) bool {
	a := c.args
	force := false
	for _, w := range a[1:] {
		switch w.val {
		case "--force-all", "--force-remove-essential", "--allow-remove-essential", "--force-depends", "--nodeps", "-dd", "-Rdd", "--force-remove-reinstreq":
			force = true
		}
	}
	removing := false
	switch c.prog {
	case "dpkg":
		removing = hasFlag(a, "rP", "remove", "purge")
	case "rpm":
		removing = hasFlag(a, "e", "erase")
	case "pacman":
		for _, w := range a[1:] {
			if strings.HasPrefix(w.val, "-R") || w.val == "--remove" {
				removing = true
			}
		}
	case "emerge":
		removing = hasFlag(a, "C", "unmerge", "depclean")
	case "xbps-remove":
		removing = true
	default:
		for _, o := range operands(c) {
			switch o.val {
			case "remove", "purge", "autoremove", "erase", "del", "rm", "uninstall", "autopurge":
				removing = true
			}
			break
		}
	}
	if !removing {
		return false
	}
	if force {
		return true
	}
	for _, o := range operands(c) {
		if isSystemPackage(o.val) {
			return true
		}
	}
	return false
}

// criticalWord reports a word naming a critical folder: the root of a glob counts (/* is /), so
// does the known start of a word only known when it runs (~/$X may be ~), and so does where a link
// leads (ln -s ~ h; rm -rf h/).
func (j *judgement) criticalWord(c *command, w word) (string, bool) {
	p, ok := j.pathOf(c.cwd, w)
	if !ok {
		return "", false
	}
	if w.glob {
		p = globRoot(p)
	}
	if what, ok := critical(p, j.s); ok {
		return what, true
	}
	if rp := j.real(p); rp != p {
		return critical(rp, j.s)
	}
	return "", false
}

// rsyncDeletes reports rsync deleting what the source does not have.
func rsyncDeletes(a []word) bool {
	for _, w := range a[1:] {
		if w.val == "--del" || strings.HasPrefix(w.val, "--delete") {
			return true
		}
	}
	return false
}

// globRoot is the folder a glob pattern starts in: /etc/*.conf → /etc.
func globRoot(p string) string {
	i := strings.IndexAny(p, "*?[")
	if i < 0 {
		return p
	}
	d := p[:i]
	if k := strings.LastIndexByte(d, '/'); k >= 0 {
		d = d[:k]
	}
	if d == "" {
		return "/"
	}
	return d
}
