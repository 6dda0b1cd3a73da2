package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"filippo.io/age"

	"github.com/ensemblework/ensemble/internal/atomicfile"
)

// A passphrase on the local key (spec 002 §8.7.4): secret.key then holds the 32 bytes inside an age
// file encrypted with scrypt, so a copy of the data folder opens nothing without the passphrase.
// The runtime asks for it once at start (Options.Passphrase); the values it seals do not change.

// PassphraseVar is where a runtime started unattended (a service) finds the passphrase.
const PassphraseVar = "ENSEMBLE_PASSPHRASE"

// ErrLocked is a locked key opened without its passphrase.
var ErrLocked = errors.New("this computer's secret.key is locked with a passphrase: start Ensemble from a terminal, which asks for it, or set ENSEMBLE_PASSPHRASE")

var ageHeader = []byte("age-encryption.org/v1\n")

// KeyLocked reports whether the data folder's local key has a passphrase.
func KeyLocked(dir string) (bool, error) {
	raw, err := os.ReadFile(filepath.Join(dir, KeyFile))
	if err != nil {
		return false, fmt.Errorf("secrets: local key: %w", err)
	}
	return bytes.HasPrefix(raw, ageHeader), nil
}

// unlock is the key's 32 bytes from raw, asking for the passphrase when it is locked.
func unlock(raw []byte, passphrase func() (string, error)) ([]byte, error) {
	if !bytes.HasPrefix(raw, ageHeader) {
		return raw, nil
	}
	if passphrase == nil {
		return nil, ErrLocked
	}
	pw, err := passphrase()
	if err != nil {
		return nil, err
	}
	if pw == "" {
		return nil, ErrLocked
	}
	id, err := age.NewScryptIdentity(pw)
	if err != nil {
		return nil, err
	}
	r, err := age.Decrypt(bytes.NewReader(raw), id)
	if err != nil {
		return nil, errors.New("that passphrase does not open this computer's secret.key")
	}
	key, err := io.ReadAll(io.LimitReader(r, 64))
	if err != nil {
		return nil, errors.New("that passphrase does not open this computer's secret.key")
	}
	return key, nil
}

// SetPassphrase puts a passphrase on the data folder's local key, changes it, or with next ""
// takes it off. current is the passphrase it has now ("" when it has none).
func SetPassphrase(dir, current, next string) error {
	path := filepath.Join(dir, KeyFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("secrets: local key: %w", err)
	}
	key, err := unlock(raw, func() (string, error) { return current, nil })
	if err != nil {
		return err
	}
	if len(key) != 32 {
		return fmt.Errorf("secrets: local key %s holds %d bytes, not 32", path, len(key))
	}
	out := key
	if next != "" {
		if len(next) < 8 {
			return errors.New("A passphrase is at least 8 characters.")
		}
		rcp, err := age.NewScryptRecipient(next)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		w, err := age.Encrypt(&buf, rcp)
		if err != nil {
			return err
		}
		w.Write(key)
		if err := w.Close(); err != nil {
			return err
		}
		out = buf.Bytes()
	}
	return atomicfile.Write(path, out, 0o600) // a crash leaves the old key or the new one
}
