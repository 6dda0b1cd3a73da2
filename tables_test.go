package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/internal/gosource"
)

// owners says which package owns each table: the one package whose SQL may name it. Any other
// package asks the owner through a method, so a column change stays inside one package. Every
// table runtime/store/migrations creates is listed here, once.
var owners = map[string][]string{
	"runtime/records":  {"spaces", "projects", "people", "repos", "tasks", "pages", "files", "search_docs", "search_fts"},
	"runtime/ledger":   {"ledger_groups", "ledger_changes"},
	"runtime/computer": {"computer_answers"},
	"runtime/events":   {"events"},
	"runtime/needs":    {"decisions"},
	"runtime/jobs":     {"jobs", "job_settings"},
	"runtime/sessions": {"session_deletions", "session_choices", "session_cleanup"},
	"runtime/node": {"node_agents", "node_rooms", "node_room_members", "node_messages", "node_turns", "node_memories",
		"node_runs", "node_session_events", "node_missions", "node_steps", "node_attempts", "node_outbox", "node_claims",
		"node_routines", "node_routine_runs", "node_hook_deliveries", "browser_capture_sites"},
	"runtime/assistant":   {"assistant_conversations", "assistant_messages", "assistant_settings", "assistant_proposals", "assistant_workflows"},
	"runtime/skills":      {"skills"},
	"runtime/secrets":     {"secrets", "secret_seal_seen", "secret_settings"},
	"runtime/profiles":    {"run_profiles"},
	"runtime/bridge/keys": {"bridge_keys"},
	"runtime/api":         {"browser_sessions", "paired_devices"},
}

// sqlTable finds a table named in SQL: the word after FROM, JOIN, INTO, UPDATE or TABLE. The
// keywords are matched in capitals, as this tree writes its SQL, so a sentence ("from now on")
// is not read as a query.
var sqlTable = regexp.MustCompile(`\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:IF (?:NOT )?EXISTS\s+)?(\w+)\b`)

// TestTableOwners fails when a package's SQL names a table another package owns. Tests are left
// out: they may look at any table to check what was written.
func TestTableOwners(t *testing.T) {
	owner := ownerOf(t)
	for _, v := range tableUses(t, ".", owner) {
		t.Errorf("%s names %s, which %s owns; ask %s through a method: %s", v.pos, v.table, owner[v.table], filepath.Base(owner[v.table]), v.sql)
	}
}

// ownerOf maps each table to its owner, checking owners against the tables the migrations create.
func ownerOf(t *testing.T) map[string]string {
	t.Helper()
	owner := map[string]string{}
	for pkg, tables := range owners {
		for _, tb := range tables {
			if o, ok := owner[tb]; ok {
				t.Fatalf("table %s has two owners, %s and %s", tb, o, pkg)
			}
			owner[tb] = pkg
		}
	}
	created := migrationTables(t)
	for _, tb := range created {
		if owner[tb] == "" {
			t.Errorf("table %s (runtime/store/migrations) has no owner in owners", tb)
		}
	}
	for tb, pkg := range owner {
		if !slices.Contains(created, tb) {
			t.Errorf("owners gives %s the table %s, which no migration creates", pkg, tb)
		}
	}
	return owner
}

var (
	createTable = regexp.MustCompile(`(?i)\bCREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)`)
	renameTable = regexp.MustCompile(`(?i)\bALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)`)
)

// migrationTables lists every table the migrations leave: those they create, under the names a
// later rename gives them (the files are read in the order they are applied).
func migrationTables(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("runtime", "store", "migrations", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found: %v", err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range createTable.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
		for _, m := range renameTable.FindAllStringSubmatch(string(b), -1) {
			if i := slices.Index(out, m[1]); i >= 0 {
				out[i] = m[2]
			}
		}
	}
	return out
}

type tableUse struct {
	pos   string // file:line
	table string
	sql   string
}

// tableUses walks the Go files under root (tests, frontend and vendored trees left out) and
// returns each string literal that names a table its package does not own.
func tableUses(t *testing.T, root string, owner map[string]string) []tableUse {
	t.Helper()
	var out []tableUse
	err := gosource.Walk(root, gosource.Options{Mode: parser.SkipObjectResolution}, func(path string, fset *token.FileSet, f *ast.File) error {
		pkg := filepath.ToSlash(filepath.Dir(path))
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range sqlTable.FindAllStringSubmatch(s, -1) {
				if o, known := owner[m[1]]; known && o != pkg {
					p := fset.Position(lit.Pos())
					out = append(out, tableUse{pos: p.Filename + ":" + strconv.Itoa(p.Line), table: m[1], sql: strings.Join(strings.Fields(s), " ")})
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTableUsesFindsAViolation: the scanner reads SQL in any string literal, raw or quoted, and
// names only tables after a keyword, as whole words.
func TestTableUsesFindsAViolation(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nconst a = `SELECT id FROM tasks_archive`\nconst b = \"UPDATE jobs SET status = ?\"\n" +
		"var c = []string{`SELECT t.id FROM tasks t LEFT JOIN decisions d ON d.run_id = t.id`, \"Remove it from tasks\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "x_test.go"), []byte("package x\n\nconst t = `SELECT 1 FROM tasks`\n"), 0o644)
	owner := map[string]string{"tasks": "runtime/records", "jobs": "runtime/jobs", "decisions": "runtime/needs"}
	var got []string
	for _, u := range tableUses(t, dir, owner) {
		got = append(got, u.table)
	}
	if want := []string{"jobs", "tasks", "decisions"}; !slices.Equal(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
}
