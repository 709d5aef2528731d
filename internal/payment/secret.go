package payment

import (
	"encoding/json"
	"fmt"

	"github.com/paygate/paygate/internal/instrument"
)

// SecretVersion is the format of Secret written now. The JSON names of
// Secret and the types it holds ARE that format: secrets queued before a
// deploy are opened by the next version, so a name is never changed. A new
// field is added with omitempty; a change of meaning is a new version that
// decode reads beside the old one.
//
// Version 1 is the format of the first release, when the provider's own
// types were serialized without tags: hence the Go-style names of
// instrument.Card, Wallet and SecretCustomer. A secret of that release
// carries no "v".
const SecretVersion = 1

// Secret is what a payment operation must hand the provider and Paygate
// must not keep: sealed while the job waits, deleted once the provider
// has answered (docs/design/decisions.md section 8).
type Secret struct {
	Version  int                        `json:"v,omitempty"`
	Card     *instrument.Card           `json:"card,omitempty"`
	Wallet   *instrument.Wallet         `json:"wallet,omitempty"`
	Phone    string                     `json:"phone,omitempty"`
	Code     string                     `json:"code,omitempty"`
	Customer *instrument.SecretCustomer `json:"customer,omitempty"`
}

// decode reads a secret of any known version.
func (s *Secret) decode(raw []byte) error {
	if err := json.Unmarshal(raw, s); err != nil {
		return err
	}
	if s.Version > SecretVersion {
		return fmt.Errorf("an operation secret of version %d, newer than this Paygate (%d)", s.Version, SecretVersion)
	}
	return nil
}
