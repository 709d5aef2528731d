// Package operation carries Paygate's calls to providers, for every
// resource that makes them (payments today; verifications and payouts
// next). An operation is one provider call; its id is the idempotency key
// the provider sees, so a retry can never act twice (docs/design/decisions.md
// section 4). The Engine owns the mechanism every resource shares: the job
// that runs an operation, steps, retries with backoff, snoozes on rate
// limits, "inquire, never resend" once an outcome is unknown or unreadable,
// and the sealed secret that is deleted once the provider has seen it. A
// resource plugs in with a Handler: it makes the call and records the
// outcome on its own records (docs/architecture.md).
package operation

import (
	"encoding/json"
	"time"
)

// State is where an operation stands.
type State string

// The states.
const (
	// Pending: to be sent. Sending again is safe: the provider dedups on
	// the operation id.
	Pending State = "pending"
	// Inquiring: the answer was lost or unreadable. The outcome is asked
	// for, never sent again (docs/design/decisions.md section 4).
	Inquiring State = "inquiring"
	// Done: the outcome is recorded.
	Done State = "done"
)

// Operation is one call to a provider for a resource.
type Operation struct {
	ID string
	// Resource is the kind of record the call is for ("payment"), and
	// ResourceID its id: the Handler registered under Resource runs it.
	Resource   string
	ResourceID string
	// Kind is the call, as the resource names it ("pay", "capture", …).
	Kind        string
	State       State
	AmountMinor int64
	// Ref is a record of the resource's that the operation completes (a
	// payment's refund), empty when none.
	Ref string
	// Result is a short outcome for the record: a status or an error
	// kind, never provider text.
	Result    string
	CreatedAt time.Time
	UpdatedAt time.Time
	// RescueAt, when set, is when the lease of the run that the process
	// queuing the operation has in hand lapses (internal/handoff): the
	// operation is written with it and no River job. Only written; the
	// outcome that makes the operation done clears it.
	RescueAt time.Time
}

// Sealer encrypts data at rest (the vault).
type Sealer interface {
	Seal(plaintext, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// AAD binds an operation's sealed secret to the operation.
func AAD(operationID string) []byte { return []byte("operation_secret:" + operationID) }

// Seal seals what an operation must hand the provider and Paygate must not
// keep (card data, wallet payloads, phones, codes: docs/design/decisions.md
// section 8): v is a resource's own versioned, JSON-tagged secret type.
func Seal[S any](s Sealer, operationID string, v *S) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return s.Seal(raw, AAD(operationID))
}

// Open opens a secret sealed by Seal into v.
func Open[S any](s Sealer, operationID string, sealed []byte, v *S) error {
	raw, err := s.Open(sealed, AAD(operationID))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
