// Package backup writes and restores an encrypted copy of Ensemble's data folder (age,
// filippo.io/age): the database, taken consistently while the runtime runs, the keys its secrets
// need, and the person's files. A backup opens only with the recipient's identity or the
// passphrase; restoring puts it into a fresh data folder.
package backup

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/ensemblework/ensemble/runtime/store"
)

// dbName is the database's file in a data folder.
const dbName = "ensemble.db"

// kept are what a backup holds besides the database, relative to the data folder: the keys the
// secrets and the phone path need, and the person's files. Run folders, worktrees and the relay's
// certificates are made again; api.json belongs to a running runtime.
var kept = []string{"secret.key", "seal-key.json", "age-identity.txt", "relay.json", "relay/device.key", "files", "evidence", "assistant"}

// Write encrypts a backup of dataDir to w for the recipients.
func Write(ctx context.Context, dataDir string, w io.Writer, to ...age.Recipient) error {
	tmp, err := os.MkdirTemp("", "ensemble-backup-")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer os.RemoveAll(tmp)
	snap := filepath.Join(tmp, dbName)
	if err := store.BackupFile(ctx, filepath.Join(dataDir, dbName), snap); err != nil {
		return err
	}
	enc, err := age.Encrypt(w, to...)
	if err != nil {
		return fmt.Errorf("backup: encrypt: %w", err)
	}
	tw := tar.NewWriter(enc)
	if err := addFile(tw, snap, dbName); err != nil {
		return err
	}
	for _, name := range kept {
		if err := addTree(ctx, tw, dataDir, name); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("backup: encrypt: %w", err)
	}
	return nil
}

// addTree adds dataDir/name, a file or a folder with what is in it; a missing one is left out.
func addTree(ctx context.Context, tw *tar.Writer, dataDir, name string) error {
	root := filepath.Join(dataDir, filepath.FromSlash(name))
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil // folders come with their files; links and devices are not the person's data
		}
		rel, err := filepath.Rel(dataDir, p)
		if err != nil {
			return err
		}
		return addFile(tw, p, filepath.ToSlash(rel))
	})
}

func addFile(tw *tar.Writer, src, name string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: fi.Size(), ModTime: fi.ModTime().UTC().Truncate(time.Second), Typeflag: tar.TypeReg}); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("backup: %s: %w", name, err)
	}
	return nil
}

// Restore decrypts a backup from r with the identities and puts it into dataDir, which must hold
// no database yet. It says how many files it wrote. A backup that does not open, or holds a
// name outside what a backup keeps, writes nothing it has not checked.
func Restore(r io.Reader, dataDir string, with ...age.Identity) (int, error) {
	if _, err := os.Stat(filepath.Join(dataDir, dbName)); err == nil {
		return 0, fmt.Errorf("%s already holds a database; restore into a new data folder (--data), or stop Ensemble and move that one away first", dataDir)
	}
	dec, err := age.Decrypt(r, with...)
	if err != nil {
		return 0, fmt.Errorf("the backup does not open with that identity or passphrase: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	tr := tar.NewReader(dec)
	n, sawDB := 0, false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, fmt.Errorf("the backup is damaged: %w", err)
		}
		name, err := checkName(h)
		if err != nil {
			return n, err
		}
		if err := writeFile(dataDir, name, tr); err != nil {
			return n, err
		}
		n++
		sawDB = sawDB || name == dbName
	}
	if !sawDB {
		return n, errors.New("the backup holds no database; it is not one `ensemble backup` wrote")
	}
	return n, nil
}

// checkName is the entry's path when it is a file a backup keeps, under the data folder.
func checkName(h *tar.Header) (string, error) {
	name := path.Clean(h.Name)
	if h.Typeflag != tar.TypeReg || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
		return "", fmt.Errorf("the backup holds %q, which no backup keeps; nothing more is restored", h.Name)
	}
	if name == dbName {
		return name, nil
	}
	for _, k := range kept {
		if name == k || strings.HasPrefix(name, k+"/") {
			return name, nil
		}
	}
	return "", fmt.Errorf("the backup holds %q, which no backup keeps; nothing more is restored", h.Name)
}

func writeFile(dataDir, name string, r io.Reader) error {
	dst := filepath.Join(dataDir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// Every file is its owner's alone, as the data folder's are.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("restore %s: %w", name, err)
	}
	return f.Close()
}
