package payout

import (
	"encoding/json"
	"fmt"

	"github.com/paygate/paygate/internal/instrument"
)

// SecretVersion is the format of Secret written now. The JSON names below,
// and those of the instrument types it holds (internal/instrument), ARE
// that format: a secret queued before a deploy is opened by the next
// version, so a name is never changed; a new field is added with
// omitempty, a change of meaning is a new version.
const SecretVersion = 1

// Secret is what a payout operation hands the provider and Paygate must
// not keep: the destination card, the wallet payload, the customer's data
// and a one-time code. It is sealed while the job waits and deleted once
// the provider has answered (docs/design/decisions.md section 8).
type Secret struct {
	Version  int                        `json:"v"`
	Card     *instrument.Card           `json:"card,omitempty"`
	Wallet   *instrument.Wallet         `json:"wallet,omitempty"`
	Code     string                     `json:"code,omitempty"`
	Customer *instrument.SecretCustomer `json:"customer,omitempty"`
}

// decode reads a secret of any known version.
func (s *Secret) decode(raw []byte) error {
	if err := json.Unmarshal(raw, s); err != nil {
		return err
	}
	if s.Version > SecretVersion {
		return fmt.Errorf("a payout secret of version %d, newer than this Paygate (%d)", s.Version, SecretVersion)
	}
	return nil
}
