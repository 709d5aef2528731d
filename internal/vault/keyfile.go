package vault

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// maxFileSize bounds what Load reads: a key file holds a few dozen lines.
const maxFileSize = 1 << 20

// Parse reads master keys in the key file format: one key per line, "mk_"
// plus 8 lower-case hex digits, whitespace, then the 32-byte key in standard
// base64; the first key is the active one. Blank lines and lines starting
// with "#" are skipped. A comma also separates keys, so that several fit in
// one environment variable (PAYGATE_MASTER_KEY="mk_… …,mk_… …"), where a
// cluster that shares a PostgreSQL database keeps them.
//
// Errors name the entry by number and never quote it: a misplaced key must
// not end up in a log.
func Parse(text string) (*Keyring, error) {
	var keys []masterKey
	entries := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' })
	for n, entry := range entries {
		entry = strings.TrimSpace(entry)
		if entry == "" || strings.HasPrefix(entry, "#") {
			continue
		}
		fields := strings.Fields(entry)
		if len(fields) != 2 {
			return nil, fmt.Errorf("vault: master key entry %d: want \"mk_<8 hex digits> <base64 key>\"", n+1)
		}
		id, encoded := fields[0], fields[1]
		if !validID(id) {
			return nil, fmt.Errorf("vault: master key entry %d: the id must be mk_ and 8 lower-case hex digits", n+1)
		}
		key, err := base64.StdEncoding.Strict().DecodeString(encoded)
		if err != nil || len(key) != keyLen {
			return nil, fmt.Errorf("vault: master key %s: the key must be %d bytes in standard base64", id, keyLen)
		}
		if indexOf(keys, id) >= 0 {
			return nil, fmt.Errorf("vault: master key %s appears twice", id)
		}
		keys = append(keys, masterKey{id: id, key: key})
	}
	if len(keys) == 0 {
		return nil, errors.New("vault: no master key")
	}
	return &Keyring{keys: keys}, nil
}

func validID(id string) bool {
	if len(id) != idLen || !strings.HasPrefix(id, "mk_") {
		return false
	}
	for _, c := range []byte(id[3:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Load reads a master key file. It refuses a file that group or others may
// access (docs/design/decisions.md section 8: the key file is mode 0600),
// before reading a byte of it.
func Load(path string) (*Keyring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vault: master key file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("vault: master key file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("vault: master key file %s is not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("vault: master key file %s has mode %04o: it must not be accessible by group or others; run chmod 600 %s", path, perm, path)
	}
	text, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("vault: master key file %s: %w", path, err)
	}
	if len(text) > maxFileSize {
		return nil, fmt.Errorf("vault: master key file %s is larger than %d bytes", path, maxFileSize)
	}
	k, err := Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return k, nil
}

// LoadOrCreate loads the master key file at path, or creates it with one new
// key, mode 0600, when there is none (docs/design/decisions.md section 8: an
// empty data dir gets a generated master key file). The new file is written
// in full under a temporary name and then linked into place, which fails if
// path exists: two processes starting at once both end up with the one key
// that won, and none ever reads a half-written file. A missing parent folder
// is created with mode 0700.
func LoadOrCreate(path string) (*Keyring, error) {
	k, err := Load(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("vault: master key file: %w", err)
	}
	k = New()
	tmp, err := writeTemp(path, k.format())
	if err != nil {
		return nil, fmt.Errorf("vault: create master key file %s: %w", path, err)
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, path)
	if errors.Is(err, fs.ErrExist) {
		return Load(path) // another process created it first
	}
	if err != nil {
		return nil, fmt.Errorf("vault: create master key file %s: %w", path, err)
	}
	syncDir(path)
	return k, nil
}

// Rotate makes a new master key the active one and writes the keyring to
// path (usually the file it came from). The file is replaced atomically: a
// temporary file of mode 0600 in the same folder, renamed over it, so a
// crash leaves the old file or the new one, never a mix. Older keys stay, so
// every record still opens; Rewrap moves records to the new key. When the
// file cannot be written, the keyring is left as it was.
//
// Other processes that read the same file see the new key only when they
// load it again; until then they fail to open records sealed under it with
// ErrUnknownKey, so a cluster reloads all its nodes after a rotation.
func (k *Keyring) Rotate(path string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := append([]masterKey{newMasterKey(k.keys)}, k.keys...)
	tmp, err := writeTemp(path, (&Keyring{keys: keys}).format())
	if err != nil {
		return fmt.Errorf("vault: rotate %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("vault: rotate %s: %w", path, err)
	}
	syncDir(path)
	k.keys = keys
	return nil
}

// writeTemp writes text to a new file of mode 0600 beside path, synced to
// disk, and returns its name.
func writeTemp(path, text string) (name string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".master-key-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	err = f.Chmod(0o600) // CreateTemp's mode already; said again because it matters
	if err == nil {
		_, err = f.WriteString(text)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}

// syncDir makes a new name in path's folder durable where the platform
// allows it; where it does not, the name is still there, only less durable.
func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
}

// format writes the keyring in the key file format, active key first. It is
// unexported and no marshaling interface calls it, so a keyring never ends
// up in JSON or a log by accident.
func (k *Keyring) format() string {
	var b strings.Builder
	for _, m := range k.keys {
		b.WriteString(m.id)
		b.WriteByte(' ')
		b.WriteString(base64.StdEncoding.EncodeToString(m.key))
		b.WriteByte('\n')
	}
	return b.String()
}
