// Package store opens Ensemble's SQLite database: one file in the data folder, in WAL mode, with its
// schema brought up to date by the embedded migrations.
//
// A Store holds two pools over the same file. Writes go through a single connection, so SQLite never
// has to arbitrate between writers (no SQLITE_BUSY under load) and the order of commits is the order
// the runtime decided. Reads use a pool of their own and see the last committed state (WAL).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store is an open database.
type Store struct {
	path  string
	write *sql.DB // one connection: every write transaction
	read  *sql.DB // many connections: reads
}

// ErrTooNew is matched (errors.Is) by Open's error when the database was written by a newer
// Ensemble; the error itself is a [*TooNewError].
var ErrTooNew = errors.New("database is from a newer version of Ensemble")

// TooNewError refuses a database whose schema is newer than this build knows. Opening it anyway
// would let an older build write rows a newer schema does not expect.
type TooNewError struct {
	Path    string
	Version int // the database's schema version
	Known   int // the newest this build knows
}

func (e *TooNewError) Error() string {
	return fmt.Sprintf("The database %s is from a newer version of Ensemble (schema version %d; this one knows up to %d); update Ensemble to open it.",
		e.Path, e.Version, e.Known)
}

func (e *TooNewError) Is(target error) bool { return target == ErrTooNew }

// Open opens (creating if needed) the database at path and applies pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := private(abs, true); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", dsn(abs, writePool))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	s := &Store{path: abs, write: w}
	if err := migrate(ctx, w); err != nil {
		w.Close()
		var tn *TooNewError
		if errors.As(err, &tn) {
			tn.Path = abs
		}
		return nil, err
	}
	// The write-ahead log and its index exist now; a pair left by an older build may be wider.
	for _, f := range []string{abs + "-wal", abs + "-shm"} {
		if err := private(f, false); err != nil {
			w.Close()
			return nil, err
		}
	}
	r, err := sql.Open("sqlite", dsn(abs, readPool))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	r.SetMaxOpenConns(max(4, runtime.NumCPU()))
	s.read = r
	return s, nil
}

// FileMode is the mode of the database, its write-ahead log and index, and every backup: they hold
// everything the person keeps here, so only their own user may read them.
const FileMode os.FileMode = 0o600

// private makes the file at path readable and writable by its owner only; with create, a missing
// one is made empty with that mode, so SQLite (which gives its log and index the database's mode)
// never creates any of them wider. A missing file is otherwise left missing.
func private(path string, create bool) error {
	if create {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, FileMode)
		if err != nil {
			return fmt.Errorf("store: open %s: %w", path, err)
		}
		f.Close()
	}
	err := os.Chmod(path, FileMode)
	if err != nil && !(errors.Is(err, os.ErrNotExist) && !create) {
		return fmt.Errorf("store: make %s private: %w", path, err)
	}
	return nil
}

// dsn builds the connection string. synchronous(FULL) makes each commit durable before it is
// answered: a kill -9 or a power cut never loses a write the person was told about.
func dsn(path string, use pool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	switch use {
	case readPool:
		q.Add("_pragma", "query_only(1)")
	case writePool:
		// Take the write lock at BEGIN, not at the first write, so a transaction never fails halfway
		// when it upgrades from reading to writing.
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

type pool int

const (
	writePool pool = iota
	readPool
	backupPool // reads the database, writes only the copy (VACUUM INTO is refused under query_only)
)

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Writer is the single-connection pool every write transaction must use.
func (s *Store) Writer() *sql.DB { return s.write }

// Reader is the pool for reads.
func (s *Store) Reader() *sql.DB { return s.read }

// Close closes both pools.
func (s *Store) Close() error {
	return errors.Join(s.read.Close(), s.write.Close())
}

// Backup writes a consistent copy of the database to dest, which must not exist. It runs inside one
// read transaction, so it is safe while the runtime writes.
func (s *Store) Backup(ctx context.Context, dest string) error {
	return BackupFile(ctx, s.path, dest)
}

// BackupFile copies the database at src to dest without migrating or writing to it, whether or not a
// runtime has it open.
func BackupFile(ctx context.Context, src, dest string) error {
	abs, err := filepath.Abs(src)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// Opening a missing file would create an empty database where the person's data should be.
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(abs, backupPool))
	if err != nil {
		return fmt.Errorf("backup: open %s: %w", abs, err)
	}
	defer db.Close()
	if v, err := schemaVersion(ctx, db); err != nil {
		return fmt.Errorf("backup: %w", err)
	} else if v == 0 {
		return fmt.Errorf("backup: %s is not an Ensemble database", abs)
	}
	return backup(ctx, db, dest)
}

func backup(ctx context.Context, db *sql.DB, dest string) error {
	abs, err := filepath.Abs(dest)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// VACUUM INTO writes into an empty file as it finds it: made here, with the database's mode, the
	// copy is never readable by others, not even while it is written.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	f.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", abs); err != nil {
		os.Remove(abs)
		return fmt.Errorf("backup to %s: %w", abs, err)
	}
	return private(abs, false)
}
