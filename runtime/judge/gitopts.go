package judge

import "strings"

// The options of git's subcommands, for the read-only ones complete enough that an option the
// judge does not know makes the command follow the mode, and for the others the options that name
// files, so they are judged by the zones (git commit -F FILE, git diff --output=FILE).

const (
	gitDiffOpts = "-p -u --patch -s --no-patch -U:v --unified:v --output:w --output-indicator-new:v --output-indicator-old:v " +
		"--output-indicator-context:v --raw --patch-with-raw -t --indent-heuristic --no-indent-heuristic --minimal --patience --histogram " +
		"--anchored:v --diff-algorithm:v --stat:v? --compact-summary --numstat --shortstat -X:v? --dirstat:v? --cumulative " +
		"--dirstat-by-file:v? --summary --patch-with-stat -z --name-only --name-status --submodule:v? --color:v? --no-color " +
		"--color-moved:v? --no-color-moved --color-moved-ws:v --no-color-moved-ws --word-diff:v? --word-diff-regex:v --color-words:v? " +
		"--no-renames --rename-empty --no-rename-empty --check --ws-error-highlight:v --full-index --binary --abbrev:v? -B:v? " +
		"--break-rewrites:v? -M:v? --find-renames:v? -C:v? --find-copies:v? --find-copies-harder -D --irreversible-delete -l:v " +
		"--diff-filter:v -S:v -G:v --find-object:v --pickaxe-all --pickaxe-regex -O:r --skip-to:v --rotate-to:v -R --relative:v? " +
		"--no-relative -a --text --ignore-cr-at-eol --ignore-space-at-eol -b --ignore-space-change -w --ignore-all-space " +
		"--ignore-blank-lines -I:v --ignore-matching-lines:v --inter-hunk-context:v -W --function-context --exit-code --quiet " +
		"--ext-diff:L --no-ext-diff --textconv:L --no-textconv --ignore-submodules:v? --src-prefix:v --dst-prefix:v --no-prefix " +
		"--default-prefix --line-prefix:v --ita-invisible-in-index --ita-visible-in-index --cached --staged --merge-base --no-index " +
		"--cc -c -m --combined-all-paths --dd --remerge-diff --diff-merges:v --no-diff-merges --stat-width:v --stat-name-width:v " +
		"--stat-count:v --stat-graph-width:v --no-stat "
	gitLogOpts = "+num --oneline --graph --decorate:v? --no-decorate --decorate-refs:v --decorate-refs-exclude:v --source " +
		"--use-mailmap --mailmap --no-mailmap --full-diff --log-size -L:v -n:v --max-count:v --skip:v --since:v --after:v --until:v " +
		"--before:v --since-as-filter:v --author:v --committer:v --grep-reflog:v --grep:v --all-match --invert-grep -i " +
		"--regexp-ignore-case --basic-regexp -E --extended-regexp -F --fixed-strings -P --perl-regexp --remove-empty --merges " +
		"--no-merges --min-parents:v --max-parents:v --no-min-parents --no-max-parents --first-parent --exclude-first-parent-only " +
		"--not --all --branches:v? --tags:v? --remotes:v? --glob:v --exclude:v --exclude-hidden:v --reflog --alternate-refs " +
		"--single-worktree --ignore-missing --bisect --stdin --cherry-mark --cherry-pick --left-only --right-only --cherry " +
		"--walk-reflogs -g --merge --boundary --simplify-by-decoration --show-pulls --full-history --dense --sparse " +
		"--simplify-merges --ancestry-path:v? --date-order --author-date-order --topo-order --reverse --no-walk:v? --do-walk " +
		"--pretty:v? --format:v --abbrev-commit --no-abbrev-commit --no-abbrev --encoding:v --expand-tabs:v? --no-expand-tabs " +
		"--notes:v? --no-notes --show-notes:v? --standard-notes --no-standard-notes --show-signature:L --no-show-signature " +
		"--relative-date --date:v --parents --children --left-right --show-linear-break:v? --follow --no-follow --count " +
		"--clear-decorations --objects --objects-edge --no-object-names --timestamp --header "
	gitStatusOpts = "-s --short -b --branch --show-stash --porcelain:v? --long -v --verbose -u:v? --untracked-files:v? " +
		"--ignore-submodules:v? --ignored:v? -z --column:v? --no-column --ahead-behind --no-ahead-behind --renames --no-renames " +
		"--find-renames:v? "
)

// gitSubOpts are the specs of git's subcommands, by name.
var gitSubOpts = map[string]*optSpec{}

func init() {
	for names, s := range map[string]string{
		"log whatchanged reflog rev-list": gitLogOpts + gitDiffOpts,
		"show":                            gitLogOpts + gitDiffOpts,
		"diff":                            gitDiffOpts,
		"status":                          gitStatusOpts,
		"blame annotate": "-b --root --show-stats -L:v -l -t -S:r --reverse:v --first-parent -p --porcelain --line-porcelain " +
			"--incremental --encoding:v --contents:r --date:v --progress --no-progress -M:v? -C:v? --ignore-rev:v " +
			"--ignore-revs-file:r --color-lines --color-by-age -e --show-email -w -s --show-name -f --show-number -n --abbrev:v? -c --score-debug",
		"ls-files": "-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u --unmerged -k --killed -z -t -v -f " +
			"--full-name --recurse-submodules --error-unmatch --exclude:v -x:v -X:r --exclude-from:r --exclude-per-directory:v " +
			"--exclude-standard --with-tree:v --abbrev:v? --debug --eol --deduplicate --format:v --directory --no-empty-directory " +
			"--resolve-undo --sparse",
		"ls-tree": "-d -r -t -l --long -z --name-only --name-status --object-only --full-name --full-tree --abbrev:v? --format:v",
		"rev-parse": "--show-toplevel --abbrev-ref:v? --short:v? --verify -q --quiet --git-dir --git-common-dir --absolute-git-dir " +
			"--is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository --show-cdup --show-prefix " +
			"--show-superproject-working-tree --show-object-format:v? --show-ref-format --symbolic --symbolic-full-name --all " +
			"--branches:v? --tags:v? --remotes:v? --glob:v --exclude:v --default:v --prefix:v --local-env-vars --resolve-git-dir:v " +
			"--git-path:v --shared-index-path --since:v --after:v --until:v --before:v --disambiguate:v --sq --sq-quote --not " +
			"--revs-only --no-revs --flags --no-flags --keep-dashdash --stop-at-non-option --stuck-long --path-format:v",
		"describe": "--all --tags --contains --abbrev:v --candidates:v --exact-match --debug --long --match:v --exclude:v --always " +
			"--first-parent --dirty:v? --broken:v?",
		"shortlog": gitLogOpts + "-n --numbered -s --summary -e --email --group:v -c --committer -w:v?",
		"cat-file": "-t -s -e -p --textconv:L --filters:L --path:v --batch:v? --batch-check:v? --batch-command:v? --batch-all-objects " +
			"--buffer --unordered --follow-symlinks -Z --allow-unknown-type --mailmap --use-mailmap --no-mailmap",
		"branch": "-a --all -r --remotes -l --list -v --verbose --contains:v? --no-contains:v? --merged:v? --no-merged:v? " +
			"--points-at:v --sort:v --format:v --color:v? --no-color --column:v? --no-column --abbrev:v? --no-abbrev --show-current " +
			"--omit-empty -i --ignore-case -q --quiet -d -D --delete -m -M --move -c -C --copy -f --force -u:v --set-upstream-to:v " +
			"--unset-upstream --edit-description -t:v? --track:v? --no-track --create-reflog",
		"tag": "-l --list -n:v? --contains:v? --no-contains:v? --merged:v? --no-merged:v? --points-at:v --sort:v --format:v " +
			"--color:v? --column:v? --no-column -i --ignore-case --omit-empty -a --annotate -s --sign -u:v --local-user:v -f --force " +
			"-d --delete -v --verify -m:v --message:v -F:r --file:r --cleanup:v -e --edit --create-reflog --trailer:v",
		"remote":        "-v --verbose",
		"stash":         gitLogOpts + gitDiffOpts,
		"config":        "--get --get-all --get-regexp --get-urlmatch -l --list --name-only --show-origin --show-scope -z --null --type:v --bool --int --bool-or-int --path --expiry-date --default:v --local --global --system --worktree --file:r -f:r --blob:v --includes --no-includes",
		"grep":          "+num -a --text --textconv:L --no-textconv -i --ignore-case -I --max-depth:v -r --recursive --no-recursive -w --word-regexp -v --invert-match -h -H --full-name -E -G -P -F --extended-regexp --basic-regexp --perl-regexp --fixed-strings -n --line-number --column -l --files-with-matches --name-only -L --files-without-match -z --null -o --only-matching -c --count --color:v? --no-color --break --heading -p --show-function -C:v -A:v -B:v --context:v --after-context:v --before-context:v -W --function-context -m:v --max-count:v --threads:v -f:rp -e:vp --and --or --not --all-match -q --quiet --cached --untracked --no-index --exclude-standard --no-exclude-standard --recurse-submodules --parent-basename:v -O:L --open-files-in-pager:L",
		"show-ref":      "--head --heads --branches --tags -d --dereference -s --hash:v? --verify --abbrev:v? -q --quiet --exclude-existing:v? --exists",
		"for-each-ref":  "--count:v --sort:v --format:v --color:v? --shell -s --perl -p --python --tcl --points-at:v --merged:v? --no-merged:v? --contains:v? --no-contains:v? --ignore-case --omit-empty --exclude:v --include-root-refs --stdin",
		"merge-base":    "-a --all --octopus --independent --is-ancestor --fork-point",
		"name-rev":      "--tags --refs:v --exclude:v --all --annotate-stdin --stdin --name-only --no-undefined --always",
		"count-objects": "-v --verbose -H --human-readable",
		"version":       "--build-options",
		"help":          "-a --all -g --guides -c --config -i:L --info:L -m --man -w:L --web:L --user-interfaces --developer-interfaces --no-external-commands --no-aliases --verbose",
		"worktree":      "--porcelain -v --verbose -z --expire:v",
		"check-ignore":  "-q --quiet -v --verbose --stdin -z -n --non-matching --no-index",
		"var":           "-l",
		// Not read-only: only the options that name files.
		"commit":       "+partial -F:r --file:r -t:r --template:r -C:v -c:v -m:v --message:v --author:v --date:v --fixup:v --squash:v --trailer:v --cleanup:v -S:v? --gpg-sign:v? --pathspec-from-file:r",
		"notes":        "+partial -F:r --file:r -m:v --message:v -C:v -c:v --ref:v",
		"format-patch": "+partial -o:D --output-directory:D --output:w --signature-file:r --description-file:r --in-reply-to:v --subject-prefix:v --add-header:v --to:v --cc:v --suffix:v --base:v -v:v --reroll-count:v --interdiff:v --range-diff:v --creation-factor:v",
		"archive":      "+partial -o:w --output:w --format:v --prefix:v --remote:v --add-file:r --add-virtual-file:v --mtime:v",
		"apply":        "+partial --directory:v --exclude:v --include:v -p:v -C:v --whitespace:v --build-fake-ancestor:w",
		"am":           "+partial --directory:v -p:v -C:v --exclude:v --include:v --patch-format:v --resolvemsg:v",
		"hash-object":  "+partial -t:v --path:v --stdin-paths",
		"checkout":     "+partial --pathspec-from-file:r -b:v -B:v --orphan:v --conflict:v",
		"restore":      "+partial --pathspec-from-file:r -s:v --source:v",
		"reset":        "+partial --pathspec-from-file:r",
		"add":          "+partial --pathspec-from-file:r --chmod:v",
		"rm":           "+partial --pathspec-from-file:r",
		"init":         "+partial --separate-git-dir:D --template:d -b:v --initial-branch:v --object-format:v --ref-format:v --shared:v?",
		"worktree-add": "+partial -b:v -B:v --reason:v",
		"bundle":       "+partial --progress",
	} {
		sp := parseSpec(s)
		for _, n := range strings.Fields(names) {
			gitSubOpts[n] = sp
		}
	}
}
