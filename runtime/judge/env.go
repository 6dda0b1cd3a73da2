package judge

import "strings"

// Environment variables that make programs run code or load it. A variable set in front of a
// command (or exported earlier in the line) is judged like the code or file it names: a command
// in it is read as a command of its own, a file in it is a read the zones judge, and either way
// the command is no longer a quiet read.

// codeEnv hold a command some program runs through the shell.
var codeEnv = set("PAGER", "MANPAGER", "GIT_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
	"GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_PROXY_COMMAND",
	"GIT_SSH", "BROWSER", "LESSOPEN", "LESSCLOSE", "PROMPT_COMMAND", "SYSTEMD_PAGER", "BAT_PAGER", "DELTA_PAGER",
	"PSQL_PAGER", "AWS_PAGER", "GH_PAGER", "GH_EDITOR", "GH_BROWSER", "RSYNC_RSH", "CVS_RSH", "FCEDIT",
	"GIT_CONFIG_PARAMETERS", "SVN_EDITOR", "HGEDITOR", "KUBE_EDITOR", "P4EDITOR", "TERMINAL")

// fileEnv name a file or folder a program loads code or settings from.
var fileEnv = set("BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
	"DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH", "PYTHONSTARTUP", "PYTHONPATH", "PERL5LIB", "RUBYLIB", "NODE_PATH",
	"RIPGREP_CONFIG_PATH", "CURL_HOME", "WGETRC", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG", "GIT_EXEC_PATH",
	"GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GNUPGHOME", "KUBECONFIG",
	"DOCKER_CONFIG", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "GOOGLE_APPLICATION_CREDENTIALS", "NETRC",
	"LESSKEY", "LESSKEYIN", "INPUTRC", "ZDOTDIR", "XDG_CONFIG_HOME", "NPM_CONFIG_USERCONFIG", "PIP_CONFIG_FILE",
	"BAT_CONFIG_PATH", "JQ_LIBRARY_PATH", "MYSQL_HOME", "PGPASSFILE", "PGSERVICEFILE", "SSH_AUTH_SOCK", "HISTFILE",
	"CARGO_HOME", "RUSTC_WRAPPER", "GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE_PACKET")

// optionEnv carry options a program reads from its environment, which can name files and programs.
var optionEnv = set("TAR_OPTIONS", "GREP_OPTIONS", "LESS", "MAKEFLAGS", "MFLAGS", "GZIP", "XZ_OPT", "BZIP2", "ZIPOPT",
	"UNZIP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
	"MAVEN_OPTS", "GRADLE_OPTS", "PYTHONINSPECT", "PYTHONWARNINGS", "GIT_CONFIG_COUNT", "RIPGREP_OPTIONS", "FZF_DEFAULT_COMMAND", "GOFLAGS")

// envCode judges the environment a command gets.
func (r *reader) envCode(cmd *command, st *state) {
	for name, w := range cmd.envs {
		r.envVar(cmd, name, w, st)
	}
}

func (r *reader) envVar(cmd *command, name string, w word, st *state) {
	switch {
	case hasKey(codeEnv, name):
		cmd.runs = true
		if name == "GIT_CONFIG_PARAMETERS" {
			r.gitConfigParameters(cmd, w, st)
			return
		}
		w.val = strings.TrimLeft(w.val, "|-") // LESSOPEN="|cmd %s", "||cmd", "|-cmd"
		if w.val != "" {
			r.code(w, st)
		}
	case strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
		cmd.runs = true
		key := cmd.envs["GIT_CONFIG_KEY_"+strings.TrimPrefix(name, "GIT_CONFIG_VALUE_")]
		r.gitConfigPair(cmd, key, w, st)
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"):
		cmd.runs = true
		if _, ok := cmd.envs["GIT_CONFIG_VALUE_"+strings.TrimPrefix(name, "GIT_CONFIG_KEY_")]; !ok {
			r.gitConfigPair(cmd, w, word{val: unknown, computed: true}, st)
		}
	case hasKey(fileEnv, name):
		cmd.runs = true
		for _, part := range strings.Split(w.val, ":") {
			if part == "" {
				continue
			}
			x := w
			x.val = part
			x.known = !strings.Contains(part, unknown)
			cmd.extra = append(cmd.extra, access{w: x})
		}
	case hasKey(optionEnv, name):
		cmd.runs = true
		cmd.inline = append(cmd.inline, w)
	}
}

// exportedEnv judges a variable the line sets that later commands inherit (export X=…, X=…):
// code in it runs with them.
func (r *reader) exportedEnv(name string, w word, st *state) {
	if !hasKey(codeEnv, name) && !hasKey(fileEnv, name) && !hasKey(optionEnv, name) && !strings.HasPrefix(name, "GIT_CONFIG_") {
		return
	}
	c := &command{cwd: st.cwd, runs: true}
	if strings.HasPrefix(name, "GIT_CONFIG_VALUE_") || name == "GIT_CONFIG_PARAMETERS" {
		// Its key is set apart from it: the value is read as code.
		if w.val != "" {
			r.code(w, st)
		}
	} else {
		r.envVar(c, name, w, st)
	}
	if len(c.extra) > 0 || len(c.inline) > 0 {
		r.add(c)
	}
}
