package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/webhook"
)

// SandboxKey stores a new sandbox access key with the sandbox's channels
// (merchant.SandboxChannels, made if missing) assigned as a new sandbox key
// gets them: the auto-assigned ones. direct is the key's permission to
// send raw card data. Its secret is a placeholder: a domain test signs
// nothing.
func SandboxKey(t testing.TB, s *store.Store, direct bool) merchant.Key {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	k := merchant.Key{ID: uuid.NewString(), AccessKey: "ak_sandbox_" + randomID(), Name: "test", Environment: merchant.Sandbox,
		SecretSealed: []byte("unused"), DirectCardData: direct, CreatedAt: now}
	if err := s.CreateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	for _, c := range merchant.SandboxChannels() {
		c.ID, c.CreatedAt = uuid.NewString(), now
		c, err := s.EnsureChannel(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if c.AutoAssign {
			if err := s.AssignChannel(ctx, k.ID, c.ID, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	return k
}

// OpenOperations lists the ids of a resource's operations not yet done,
// oldest first: a domain test runs them with its operation engine
// (operation.Engine.Run) when it chooses, instead of River's workers.
func OpenOperations(t testing.TB, s *store.Store, resourceID string) []string {
	t.Helper()
	rows, err := s.DB().QueryContext(context.Background(),
		`SELECT id FROM operations WHERE resource_id = $1 AND state <> 'done' ORDER BY created_at, id`, resourceID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// EventTypes lists the types of a resource's events, oldest first.
func EventTypes(t testing.TB, s *store.Store, keyID, resourceID string) []string {
	t.Helper()
	evs, err := s.ListEvents(context.Background(), keyID, webhook.EventFilter{ResourceID: resourceID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	types := make([]string, len(evs))
	for i, ev := range evs {
		types[len(evs)-1-i] = ev.Type // newest first
	}
	return types
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
