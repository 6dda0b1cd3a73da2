package secrets

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// keyNames are files that hold keys, certificates, sign-ins or a shell's history.
var keyNames = []string{".env", ".netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials", "credentials", "credentials.json", "id_rsa",
	"id_dsa", "id_ecdsa", "id_ed25519", ".bash_history", ".zsh_history", ".python_history", ".node_repl_history", ".psql_history",
	".mysql_history", "known_hosts", "authorized_keys", ".htpasswd", "secret.key", "seal-key.json"}

var keyExts = []string{".pem", ".key", ".p12", ".pfx", ".crt", ".cer", ".der", ".jks", ".keystore", ".kdbx", ".gpg", ".asc", ".ppk"}

// keyDirs are folders whose files all count as keys.
var keyDirs = []string{".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".git", ".password-store", ".config/gcloud", ".config/gh"}

// KeyPath is why a path's name or folder says it holds keys, sign-ins or a shell's history (a
// .env, a private key, a certificate, a credentials file, anything under ~/.ssh), or "". Such a
// file is never shared, uploaded or attached, whatever it holds today.
func KeyPath(path string) string {
	path = strings.ReplaceAll(path, `\`, "/") // a Windows path too, wherever it is read
	base := strings.ToLower(path[strings.LastIndex(path, "/")+1:])
	switch {
	case slices.Contains(keyNames, base) || strings.HasPrefix(base, ".env.") || strings.HasPrefix(base, "id_rsa") ||
		strings.HasPrefix(base, "id_ed25519") || strings.HasPrefix(base, "id_ecdsa") || strings.HasSuffix(base, "_history"):
		return filepath.Base(path) + " holds keys, sign-ins or a history"
	case slices.Contains(keyExts, filepath.Ext(base)):
		return filepath.Base(path) + " is a key or a certificate"
	}
	for _, d := range keyDirs {
		if lower := strings.ToLower(path); strings.Contains(lower, "/"+d+"/") || strings.HasSuffix(lower, "/"+d) {
			return "it is in a " + d + " folder, whose files hold keys"
		}
	}
	return ""
}

// maxArchiveRead is how much of an archive's entries ArchiveProblem reads.
const maxArchiveRead = 256 << 20

// ArchiveProblem reads a zip or a tar(.gz), by its name, for a key file inside or an entry that
// holds reports true for; it says which, or "". Anything else, or an archive it cannot read, is "".
func ArchiveProblem(name string, b []byte, holds func([]byte) bool) string {
	var read int64
	check := func(entry string, r io.Reader) string {
		if KeyPath("/"+entry) != "" {
			return fmt.Sprintf("%s holds %s, a file of keys or sign-ins", filepath.Base(name), entry)
		}
		data, _ := io.ReadAll(io.LimitReader(r, maxArchiveRead-read))
		read += int64(len(data))
		if holds(data) {
			return fmt.Sprintf("%s holds a saved secret's value (in %s)", filepath.Base(name), entry)
		}
		return ""
	}
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".zip"):
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return ""
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				continue
			}
			why := check(f.Name, rc)
			rc.Close()
			if why != "" {
				return why
			}
		}
	case strings.HasSuffix(lower, ".tar"), strings.HasSuffix(lower, ".tar.gz"), strings.HasSuffix(lower, ".tgz"):
		var r io.Reader = bytes.NewReader(b)
		if !strings.HasSuffix(lower, ".tar") {
			gz, err := gzip.NewReader(r)
			if err != nil {
				return ""
			}
			r = gz
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			if why := check(h.Name, tr); why != "" {
				return why
			}
		}
	}
	return ""
}
