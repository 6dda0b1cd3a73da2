package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// KeyFile is the runtime's local key, in the data folder.
const KeyFile = "secret.key"

// localKey seals values at rest: 32 random bytes for AES-256-GCM.
//
// Why not an age X25519 identity: the same process both writes and reads every value, so a
// public-key layer has no second party to serve, and age would be a dependency for what one
// standard-library AEAD does. GCM's associated data also lets each ciphertext be bound to its row
// (see [localKey.seal]), so a value copied under another name in the database does not open.
type localKey struct{ aead cipher.AEAD }

// sealVersion starts every ciphertext the local key makes, so a later format can be told apart.
const sealVersion = 1

// loadLocalKey reads secret.key from dir, making it (mode 0600) on first use; a key locked with a
// passphrase asks passphrase for it (passphrase.go).
func loadLocalKey(dir string, passphrase func() (string, error)) (*localKey, error) {
	path := filepath.Join(dir, KeyFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		raw, err = createKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: local key %s: %w", path, err)
	}
	if raw, err = unlock(raw, passphrase); err != nil {
		return nil, err
	}
	if len(raw) != 32 {
		return nil, fmt.Errorf("secrets: local key %s holds %d bytes, not 32; it was changed outside Ensemble", path, len(raw))
	}
	if err := keepPrivate(path); err != nil {
		return nil, fmt.Errorf("secrets: local key %s: %w", path, err)
	}
	// The folder holds the key beside the database it opens: a folder made earlier, or by hand,
	// with group or world access is closed to its owner again (MkdirAll leaves an existing one as it is).
	if err := keepPrivateDir(dir); err != nil {
		return nil, fmt.Errorf("secrets: data folder %s: %w", dir, err)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("secrets: local key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets: local key: %w", err)
	}
	return &localKey{aead: aead}, nil
}

// createKeyFile writes 32 fresh bytes to path. O_EXCL makes two runtimes starting at once agree on
// one key: the loser reads the winner's.
func createKeyFile(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return key, f.Close()
}

// keepPrivate sets a key file back to 0600 if something loosened it; on Windows the folder's ACL
// is what protects it.
func keepPrivate(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(path, 0o600)
	}
	return nil
}

// keepPrivateDir sets a folder back to 0700 if it lets anyone but its owner in.
func keepPrivateDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// seal encrypts plain, bound to context (the row's name, or what the bytes are): version byte,
// 12-byte nonce, then the ciphertext and tag.
func (k *localKey) seal(plain []byte, context string) []byte {
	out := make([]byte, 1, 1+k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	out[0] = sealVersion
	nonce := make([]byte, k.aead.NonceSize())
	rand.Read(nonce)
	out = append(out, nonce...)
	return k.aead.Seal(out, nonce, plain, []byte(context))
}

// open reverses seal for the same context.
func (k *localKey) open(box []byte, context string) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(box) < 1+n+k.aead.Overhead() || box[0] != sealVersion {
		return nil, errors.New("not a value this Ensemble sealed")
	}
	plain, err := k.aead.Open(nil, box[1:1+n], box[1+n:], []byte(context))
	if err != nil {
		return nil, errors.New("it does not open with this computer's secret.key (the key or the value was changed)")
	}
	return plain, nil
}
