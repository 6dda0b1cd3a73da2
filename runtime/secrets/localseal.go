package secrets

import "os"

// LocalSealer seals small values that other parts of the runtime keep in files of their own (the
// relay's device key) with the local key, each bound to a context naming what it holds.
type LocalSealer struct{ k *localKey }

// OpenLocalSealer loads the local key of the data folder dir, making it on first use.
func OpenLocalSealer(dir string) (*LocalSealer, error) {
	k, err := loadLocalKey(dir, EnvPassphrase)
	if err != nil {
		return nil, err
	}
	return &LocalSealer{k: k}, nil
}

// EnvPassphrase is the passphrase ENSEMBLE_PASSPHRASE holds, for a command that opens the local
// key without a runtime (none: a locked key is refused with how to open it).
func EnvPassphrase() (string, error) { return os.Getenv(PassphraseVar), nil }

// Sealer is the store's local key, as a [LocalSealer].
func (s *Store) Sealer() *LocalSealer { return &LocalSealer{k: s.key} }

// Seal encrypts plain for this computer, bound to context.
func (s *LocalSealer) Seal(plain []byte, context string) []byte { return s.k.seal(plain, context) }

// Open reverses Seal for the same context; the error is one sentence.
func (s *LocalSealer) Open(box []byte, context string) ([]byte, error) { return s.k.open(box, context) }
