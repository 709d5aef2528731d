package vault

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSealOpenRoundTrip(t *testing.T) {
	k := New()
	tests := []struct {
		name      string
		plaintext []byte
		aad       []byte
	}{
		{"card number", []byte("4242424242424242"), []byte("payment:3f1c2a9e:card_number")},
		{"empty plaintext", []byte{}, []byte("x")},
		{"no aad", []byte("sk_test_secret"), nil},
		{"large", bytes.Repeat([]byte{0xAB}, 64<<10), []byte("wallet")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sealed, err := k.Seal(tt.plaintext, tt.aad)
			require.NoError(t, err)
			require.Len(t, sealed, bodyStart+len(tt.plaintext)+gcmExtra)
			if len(tt.plaintext) >= 8 {
				require.False(t, bytes.Contains(sealed, tt.plaintext), "plaintext visible in record")
			}
			id, err := KeyID(sealed)
			require.NoError(t, err)
			require.Equal(t, k.ActiveID(), id)

			got, err := k.Open(sealed, tt.aad)
			require.NoError(t, err)
			require.Equal(t, string(tt.plaintext), string(got))
		})
	}
}

func TestSealIsRandomized(t *testing.T) {
	k := New()
	a, err := k.Seal([]byte("4242424242424242"), []byte("aad"))
	require.NoError(t, err)
	b, err := k.Seal([]byte("4242424242424242"), []byte("aad"))
	require.NoError(t, err)
	require.NotEqual(t, a, b, "a fresh data key and nonce per record")
}

func TestOpenFailures(t *testing.T) {
	k := New()
	aad := []byte("payment:1:card_number")
	plaintext := []byte("4000000000000002")
	sealed, err := k.Seal(plaintext, aad)
	require.NoError(t, err)

	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 1
		return b
	}
	tests := []struct {
		name   string
		keys   *Keyring
		sealed []byte
		aad    []byte
		want   error
	}{
		{"wrong aad", k, sealed, []byte("payment:2:card_number"), ErrDecrypt},
		{"missing aad", k, sealed, nil, ErrDecrypt},
		{"flipped version", k, flip(0), aad, ErrMalformed},
		{"flipped key id", k, flip(5), aad, ErrUnknownKey},
		{"flipped wrapped key", k, flip(headerLen + 20), aad, ErrDecrypt},
		{"flipped ciphertext", k, flip(bodyStart + 14), aad, ErrDecrypt},
		{"flipped tag", k, flip(len(sealed) - 1), aad, ErrDecrypt},
		{"truncated", k, sealed[:bodyStart+gcmExtra-1], aad, ErrMalformed},
		{"empty", k, nil, aad, ErrMalformed},
		{"other keyring", New(), sealed, aad, ErrUnknownKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.keys.Open(tt.sealed, tt.aad)
			require.ErrorIs(t, err, tt.want)
			require.Nil(t, got)
			require.NotContains(t, err.Error(), string(plaintext))
			_, err = tt.keys.Rewrap(tt.sealed, tt.aad)
			require.ErrorIs(t, err, tt.want, "Rewrap must refuse what Open refuses")
		})
	}
}

// TestSameIDOtherKey: a keyring whose key has the record's id but other
// bytes (a key file from another installation) fails authentication.
func TestSameIDOtherKey(t *testing.T) {
	k := New()
	sealed, err := k.Seal([]byte("secret"), nil)
	require.NoError(t, err)
	other := New()
	other.keys[0].id = k.ActiveID()
	_, err = other.Open(sealed, nil)
	require.ErrorIs(t, err, ErrDecrypt)
}

func TestRotateAndRewrap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "master.key")
	k, err := LoadOrCreate(path)
	require.NoError(t, err)
	oldID := k.ActiveID()
	aad := []byte("access_key:ak_sandbox_1:secret")
	old, err := k.Seal([]byte("sk_test_xyz"), aad)
	require.NoError(t, err)

	require.NoError(t, k.Rotate(path))
	newID := k.ActiveID()
	require.NotEqual(t, oldID, newID)
	require.Equal(t, []string{newID, oldID}, k.IDs())

	// Old records still open, new ones use the new key.
	got, err := k.Open(old, aad)
	require.NoError(t, err)
	require.Equal(t, "sk_test_xyz", string(got))
	fresh, err := k.Seal([]byte("x"), aad)
	require.NoError(t, err)
	id, _ := KeyID(fresh)
	require.Equal(t, newID, id)

	// Rewrap moves the record and keeps its ciphertext.
	moved, err := k.Rewrap(old, aad)
	require.NoError(t, err)
	id, _ = KeyID(moved)
	require.Equal(t, newID, id)
	require.Equal(t, old[bodyStart:], moved[bodyStart:], "ciphertext untouched")
	got, err = k.Open(moved, aad)
	require.NoError(t, err)
	require.Equal(t, "sk_test_xyz", string(got))
	again, err := k.Rewrap(moved, aad)
	require.NoError(t, err)
	require.Equal(t, moved, again, "already under the active key")

	// The file now holds both keys, the new one first: a fresh load opens
	// both records, and a keyring with only the new key opens the moved one.
	reloaded, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, k.IDs(), reloaded.IDs())
	_, err = reloaded.Open(old, aad)
	require.NoError(t, err)
	onlyNew := &Keyring{keys: reloaded.keys[:1]}
	_, err = onlyNew.Open(moved, aad)
	require.NoError(t, err)
	_, err = onlyNew.Open(old, aad)
	require.ErrorIs(t, err, ErrUnknownKey)

	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left behind")
}

func TestRotateFailureKeepsKeyring(t *testing.T) {
	k := New()
	before := k.IDs()
	err := k.Rotate(filepath.Join(t.TempDir(), "missing-dir", "master.key"))
	require.Error(t, err)
	require.Equal(t, before, k.IDs())
}

func TestLoadOrCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "master.key")
	k, err := LoadOrCreate(path)
	require.NoError(t, err)

	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Regexp(t, `^mk_[0-9a-f]{8} [A-Za-z0-9+/]{43}=\n$`, string(text))

	again, err := LoadOrCreate(path)
	require.NoError(t, err)
	require.Equal(t, k.IDs(), again.IDs(), "the second start reads the same key")
	sealed, err := k.Seal([]byte("x"), nil)
	require.NoError(t, err)
	_, err = again.Open(sealed, nil)
	require.NoError(t, err)
}

func TestLoadOrCreateConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "master.key")
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			k, err := LoadOrCreate(path)
			if err != nil {
				ids[i] = err.Error()
				return
			}
			ids[i] = k.ActiveID()
		})
	}
	wg.Wait()
	require.Regexp(t, `^mk_[0-9a-f]{8}$`, ids[0])
	for _, id := range ids {
		require.Equal(t, ids[0], id)
	}
}

func TestLoadRefusesLoosePermissions(t *testing.T) {
	k := New()
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644, 0o660, 0o606} {
		t.Run(fmt.Sprintf("%04o", mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "master.key")
			require.NoError(t, os.WriteFile(path, []byte(k.format()), 0o600))
			require.NoError(t, os.Chmod(path, mode))
			_, err := Load(path)
			require.ErrorContains(t, err, "must not be accessible by group or others")
			require.ErrorContains(t, err, "chmod 600")
			_, err = LoadOrCreate(path)
			require.Error(t, err, "LoadOrCreate must not replace a readable key file")
		})
	}
	t.Run("0400", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "master.key")
		require.NoError(t, os.WriteFile(path, []byte(k.format()), 0o400))
		_, err := Load(path)
		require.NoError(t, err)
	})
	t.Run("directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "master.key")
		require.NoError(t, os.Mkdir(path, 0o700))
		_, err := Load(path)
		require.ErrorContains(t, err, "not a regular file")
	})
}

func TestParse(t *testing.T) {
	const (
		key1 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // bytes 0..31
		key2 = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=" // bytes 32..63
	)
	tests := []struct {
		name    string
		text    string
		ids     []string
		wantErr string
	}{
		{"one key", "mk_0a1b2c3d " + key1 + "\n", []string{"mk_0a1b2c3d"}, ""},
		{"no final newline", "mk_0a1b2c3d " + key1, []string{"mk_0a1b2c3d"}, ""},
		{"two keys, first active", "mk_00000002 " + key2 + "\nmk_00000001 " + key1 + "\n", []string{"mk_00000002", "mk_00000001"}, ""},
		{"comments, blanks, CRLF, tabs", "# paygate\r\n\r\n  mk_00000001\t" + key1 + "\r\n", []string{"mk_00000001"}, ""},
		{"comma separated for an env variable", "mk_00000002 " + key2 + ",mk_00000001 " + key1, []string{"mk_00000002", "mk_00000001"}, ""},
		{"empty", "", nil, "no master key"},
		{"only comments", "# nothing\n", nil, "no master key"},
		{"missing key", "mk_00000001\n", nil, "entry 1"},
		{"extra field", "mk_00000001 " + key1 + " extra\n", nil, "entry 1"},
		{"key and id swapped", key1 + " mk_00000001\n", nil, "the id must be"},
		{"upper-case hex id", "mk_0A1B2C3D " + key1, nil, "the id must be"},
		{"short id", "mk_0a1b2c " + key1, nil, "the id must be"},
		{"key not base64", "mk_00000001 not*base64*at*all", nil, "32 bytes in standard base64"},
		{"key 16 bytes", "mk_00000001 AAECAwQFBgcICQoLDA0ODw==", nil, "32 bytes in standard base64"},
		{"key unpadded", "mk_00000001 " + strings.TrimSuffix(key1, "="), nil, "32 bytes in standard base64"},
		{"duplicate id", "mk_00000001 " + key1 + "\nmk_00000001 " + key2, nil, "appears twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Parse(tt.text)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.NotContains(t, err.Error(), key1, "errors never quote key material")
				require.NotContains(t, err.Error(), key2, "errors never quote key material")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.ids, k.IDs())
		})
	}
}

// TestParseFormatRoundTrip: what Rotate and LoadOrCreate write, Parse reads.
func TestParseFormatRoundTrip(t *testing.T) {
	k := New()
	require.NoError(t, k.Rotate(filepath.Join(t.TempDir(), "k")))
	p, err := Parse(k.format())
	require.NoError(t, err)
	require.Equal(t, k.IDs(), p.IDs())
	sealed, err := k.Seal([]byte("x"), nil)
	require.NoError(t, err)
	_, err = p.Open(sealed, nil)
	require.NoError(t, err)
}

func TestKeyringPrintsNoKeyMaterial(t *testing.T) {
	k := New()
	secret := k.format()
	encoded := strings.Fields(secret)[1]
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k)} {
		require.NotContains(t, s, encoded)
		require.Contains(t, s, k.ActiveID())
	}
}

func TestErrorsAreDistinct(t *testing.T) {
	require.False(t, errors.Is(ErrDecrypt, ErrMalformed))
	require.False(t, errors.Is(ErrUnknownKey, ErrDecrypt))
}

// TestDeriveKeys pins HKDF-SHA256 vectors (computed apart from Go, with
// Python's hmac module) so that every process of a cluster, and every
// version of Paygate, derives the same checkout anti-forgery key from the
// same master keys.
func TestDeriveKeys(t *testing.T) {
	const label = "paygate checkout anti-forgery v1"
	const (
		key1 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // bytes 0..31
		key2 = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=" // bytes 32..63
	)
	hexKeys := func(keys [][]byte) []string {
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = fmt.Sprintf("%x", k)
		}
		return out
	}

	tests := []struct {
		name  string
		ring  string
		label string
		want  []string
	}{
		{"one key", "mk_00000001 " + key1, label,
			[]string{"9fbbeeb5ae9a0dbd794bc40bd5d194b308a755f985503f47ce3d3c2705d146d8"}},
		{"another label", "mk_00000001 " + key1, "other",
			[]string{"7844b1d30cfb6f2d6c980f31ed962a7ce6de2d788d05b7a8b030131b9234e918"}},
		{"rotated: the active key first, the old one still there", "mk_00000002 " + key2 + "\nmk_00000001 " + key1, label,
			[]string{"1a93f67c3fe176f25633751fd603ce44f36a31c71746b5855d7cf73e06a865dd",
				"9fbbeeb5ae9a0dbd794bc40bd5d194b308a755f985503f47ce3d3c2705d146d8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Parse(tt.ring)
			require.NoError(t, err)
			require.Equal(t, tt.want, hexKeys(k.DeriveKeys(tt.label)))
		})
	}

	t.Run("rotate keeps what was derived before", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "master.key")
		k, err := LoadOrCreate(path)
		require.NoError(t, err)
		before := k.DeriveKeys(label)
		require.Len(t, before, 1)
		require.NoError(t, k.Rotate(path))
		after := k.DeriveKeys(label)
		require.Len(t, after, 2)
		require.NotEqual(t, before[0], after[0], "the new active key derives a new key")
		require.Equal(t, before[0], after[1])
		reloaded, err := Load(path)
		require.NoError(t, err)
		require.Equal(t, after, reloaded.DeriveKeys(label), "another process loading the file derives the same keys")
		require.NotEqual(t, k.keys[0].key, after[0], "the derived key is not the master key")
	})
}
