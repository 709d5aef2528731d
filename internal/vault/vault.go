// Package vault encrypts the secrets and card data Paygate must keep for a
// while (docs/design/decisions.md section 8): API secrets, which the server
// needs in clear to verify signatures (section 1), and card numbers, wallet
// payloads, phone numbers and codes while they wait for the provider.
//
// It is envelope encryption with the standard library only
// (docs/design/dependencies.md): each record gets its own random AES-256 data
// key, the record is sealed with it (AES-256-GCM with random nonces), and the
// data key is wrapped by a master key that has an id. Old master keys stay in
// the Keyring, so records sealed before a rotation still open, and Rewrap
// moves a record to the new key without touching its ciphertext.
//
// No error of this package carries key material or plaintext.
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// Errors from Open and Rewrap. They say what is wrong with a record, never
// what it holds.
var (
	// ErrMalformed: the bytes are not a sealed record of a version this
	// package knows.
	ErrMalformed = errors.New("vault: malformed sealed record")
	// ErrUnknownKey: the record's master key is not in the keyring (a key
	// file from another installation, or a key removed too early).
	ErrUnknownKey = errors.New("vault: unknown master key")
	// ErrDecrypt: authentication failed: the record was altered, or the
	// additional data is not the one it was sealed with.
	ErrDecrypt = errors.New("vault: cannot decrypt record")
)

// Layout of a sealed record, version 1:
//
//	[0]      version (1)
//	[1:12]   master key id, ASCII "mk_" + 8 lower-case hex digits
//	[12:72]  the data key wrapped by that master key: GCM nonce (12),
//	         encrypted key (32), tag (16)
//	[72:]    the plaintext sealed by the data key: GCM nonce (12),
//	         ciphertext, tag (16)
//
// The wrap is bound to version, key id and the caller's additional data; the
// ciphertext to version and additional data only, so that Rewrap can change
// the key id without touching it.
const (
	version1   = 1
	idLen      = 11
	keyLen     = 32
	gcmExtra   = 12 + 16 // nonce and tag: cipher.NewGCMWithRandomNonce's Overhead
	wrappedLen = keyLen + gcmExtra
	headerLen  = 1 + idLen
	bodyStart  = headerLen + wrappedLen
)

// masterKey is one master key. The key bytes never leave this package.
type masterKey struct {
	id  string
	key []byte
}

// Keyring holds the master keys: the first is the active one, which seals
// and wraps; every one of them opens. It is safe for concurrent use.
type Keyring struct {
	mu   sync.RWMutex
	keys []masterKey
}

// New returns a keyring with one freshly generated master key. It is for
// tests and tools; a server keeps its keys in a file (LoadOrCreate) or an
// environment variable (Parse).
func New() *Keyring {
	return &Keyring{keys: []masterKey{newMasterKey(nil)}}
}

// newMasterKey generates a key whose id is not among taken.
func newMasterKey(taken []masterKey) masterKey {
	for {
		var id [4]byte
		rand.Read(id[:]) // crypto/rand never fails
		k := masterKey{id: "mk_" + hex.EncodeToString(id[:]), key: make([]byte, keyLen)}
		if indexOf(taken, k.id) < 0 {
			rand.Read(k.key)
			return k
		}
	}
}

func indexOf(keys []masterKey, id string) int {
	for i, k := range keys {
		if k.id == id {
			return i
		}
	}
	return -1
}

// ActiveID returns the id of the master key that seals new records. Ids are
// not secret; operators see them in the key file and in logs of a rotation.
func (k *Keyring) ActiveID() string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.keys[0].id
}

// IDs returns the ids of all master keys, the active one first.
func (k *Keyring) IDs() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	ids := make([]string, len(k.keys))
	for i, m := range k.keys {
		ids[i] = m.id
	}
	return ids
}

// deriveSalt separates keys derived by DeriveKeys from any other use of the
// master keys' bytes (they also wrap data keys, with AES-GCM).
const deriveSalt = "paygate vault: derived key v1"

// DeriveKeys returns, for every master key of the ring and in the ring's
// order (the active key first), a 32-byte key derived from it with
// HKDF-SHA256 under label. It is for a secret every process of a cluster
// must share without new configuration (the checkout's anti-forgery key):
// the master keys are already shared (PAYGATE_MASTER_KEY or a shared key
// file). A caller signs with the first key and accepts any of them, so what
// it signed before a rotation still verifies after it, as long as the old
// master key stays in the ring. Distinct labels give unrelated keys; the
// master keys cannot be recovered from a derived one.
func (k *Keyring) DeriveKeys(label string) [][]byte {
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([][]byte, len(k.keys))
	for i, m := range k.keys {
		d, err := hkdf.Key(sha256.New, m.key, []byte(deriveSalt), label, keyLen)
		if err != nil {
			// hkdf.Key fails only for a length above 255 hash sizes.
			panic("vault: " + err.Error())
		}
		out[i] = d
	}
	return out
}

// String names the keyring without its keys, so that printing or logging
// one by mistake shows no key material.
func (k *Keyring) String() string {
	ids := k.IDs()
	return fmt.Sprintf("vault.Keyring{active: %s, keys: %d}", ids[0], len(ids))
}

// GoString is String, for %#v.
func (k *Keyring) GoString() string { return k.String() }

// KeyID returns the id of the master key a sealed record is wrapped under,
// so that an operator can tell which records still wait for a Rewrap.
func KeyID(sealed []byte) (string, error) {
	if len(sealed) < bodyStart+gcmExtra || sealed[0] != version1 {
		return "", ErrMalformed
	}
	return string(sealed[1:headerLen]), nil
}

// Seal encrypts plaintext under a new data key and wraps that key with the
// active master key. aad is not stored; Open must be given the same aad, so
// that a record copied onto another row (say, another payment's card) does
// not open. Use the owning row's id and the field name, e.g.
// "payment:<uuid>:card_number".
func (k *Keyring) Seal(plaintext, aad []byte) ([]byte, error) {
	k.mu.RLock()
	active := k.keys[0]
	k.mu.RUnlock()

	dataKey := make([]byte, keyLen)
	rand.Read(dataKey)
	defer clear(dataKey)

	out := make([]byte, headerLen, bodyStart+len(plaintext)+gcmExtra)
	out[0] = version1
	copy(out[1:], active.id)

	wrap, err := aead(active.key)
	if err != nil {
		return nil, err
	}
	out = wrap.Seal(out, nil, dataKey, wrapAAD(out[:headerLen], aad))

	data, err := aead(dataKey)
	if err != nil {
		return nil, err
	}
	return data.Seal(out, nil, plaintext, dataAAD(aad)), nil
}

// Open decrypts a record sealed by Seal or Rewrap under any master key of
// the keyring, with the aad it was sealed with.
func (k *Keyring) Open(sealed, aad []byte) ([]byte, error) {
	dataKey, plaintext, err := k.open(sealed, aad)
	clear(dataKey)
	return plaintext, err
}

// Rewrap returns the record with its data key wrapped by the active master
// key; the ciphertext is kept as it is. It is how records move to a new key
// after Rotate, before an old key may be retired. The whole record is
// authenticated first, so Rewrap never blesses a tampered record. A record
// already under the active key comes back unchanged.
func (k *Keyring) Rewrap(sealed, aad []byte) ([]byte, error) {
	dataKey, plaintext, err := k.open(sealed, aad)
	clear(plaintext)
	defer clear(dataKey)
	if err != nil {
		return nil, err
	}

	k.mu.RLock()
	active := k.keys[0]
	k.mu.RUnlock()
	if string(sealed[1:headerLen]) == active.id {
		return sealed, nil
	}

	out := make([]byte, headerLen, len(sealed))
	out[0] = version1
	copy(out[1:], active.id)
	wrap, err := aead(active.key)
	if err != nil {
		return nil, err
	}
	out = wrap.Seal(out, nil, dataKey, wrapAAD(out[:headerLen], aad))
	return append(out, sealed[bodyStart:]...), nil
}

// open checks a record's layout, finds its master key, unwraps its data key
// and decrypts it.
func (k *Keyring) open(sealed, aad []byte) (dataKey, plaintext []byte, err error) {
	id, err := KeyID(sealed)
	if err != nil {
		return nil, nil, err
	}
	k.mu.RLock()
	i := indexOf(k.keys, id)
	var master masterKey
	if i >= 0 {
		master = k.keys[i]
	}
	k.mu.RUnlock()
	if i < 0 {
		return nil, nil, fmt.Errorf("%w %s", ErrUnknownKey, id)
	}

	wrap, err := aead(master.key)
	if err != nil {
		return nil, nil, err
	}
	dataKey, err = wrap.Open(nil, nil, sealed[headerLen:bodyStart], wrapAAD(sealed[:headerLen], aad))
	if err != nil || len(dataKey) != keyLen {
		return nil, nil, ErrDecrypt
	}
	data, err := aead(dataKey)
	if err != nil {
		return dataKey, nil, err
	}
	plaintext, err = data.Open(nil, nil, sealed[bodyStart:], dataAAD(aad))
	if err != nil {
		return dataKey, nil, ErrDecrypt
	}
	return dataKey, plaintext, nil
}

func aead(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err) // a key of the wrong size: names the size only
	}
	return cipher.NewGCMWithRandomNonce(block)
}

// wrapAAD binds a wrapped data key to the record's version, master key id
// and the caller's additional data.
func wrapAAD(header, aad []byte) []byte {
	return append(append(make([]byte, 0, len(header)+len(aad)), header...), aad...)
}

// dataAAD binds the ciphertext to the record's version and the caller's
// additional data, but not to the master key id, which Rewrap changes.
func dataAAD(aad []byte) []byte {
	return append([]byte{version1}, aad...)
}
