package server

import (
	"sync"
	"time"

	"github.com/paygate/paygate/internal/merchant"
)

// DefaultKeyCache is how long a production process keeps an access key it
// looked up (docs/signing.md, "Revoking a key"): a key revoked by another
// process (paygate keys revoke) stops signing within that time. A sandbox
// process keeps none by default: the key carries its sandbox clock, and a
// clock advanced through one API process must be every process's at once
// (docs/design/decisions.md section 14).
const DefaultKeyCache = 5 * time.Second

// keyCacheSize bounds the cache: past it, the cache starts again empty.
const keyCacheSize = 10_000

// keyCache keeps access keys with their secrets opened for a short time,
// so that a request's signature check reads nothing from the database: one
// round trip and, on PostgreSQL, one commit fewer per request. A missing
// key is never kept, so a new key works at once.
type keyCache struct {
	ttl time.Duration // zero or less: nothing is kept
	now func() time.Time

	mu   sync.Mutex
	keys map[string]cachedKey // by access key
}

type cachedKey struct {
	key    merchant.Key
	secret string
	until  time.Time
}

// get returns a key looked up less than ttl ago.
func (c *keyCache) get(accessKey string) (merchant.Key, string, bool) {
	if c.ttl <= 0 {
		return merchant.Key{}, "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.keys[accessKey]
	if !ok || !c.now().Before(e.until) {
		return merchant.Key{}, "", false
	}
	return e.key, e.secret, true
}

// put keeps a key just read from the database.
func (c *keyCache) put(k merchant.Key, secret string) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil || len(c.keys) >= keyCacheSize {
		c.keys = map[string]cachedKey{}
	}
	c.keys[k.AccessKey] = cachedKey{key: k, secret: secret, until: c.now().Add(c.ttl)}
}

// forget drops a key that this process changed (its sandbox clock), so
// its next request reads it again.
func (c *keyCache) forget(accessKey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.keys, accessKey)
}
