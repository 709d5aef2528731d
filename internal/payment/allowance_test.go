package payment

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/allowance"
)

// settles records what save asked of the allowances: no setting exists, so
// only settlements are seen.
type settles struct {
	calls []int64 // the consumed amount of each SettleAllowance
}

func (*settles) FindAllowance(context.Context, string, allowance.Kind, string) (*allowance.Setting, error) {
	return nil, nil
}

func (*settles) ReserveAllowance(context.Context, allowance.Hold, string, *int64) (bool, error) {
	return true, nil
}

func (*settles) AllowanceUsage(context.Context, string, allowance.Kind, string, string) (allowance.Usage, error) {
	return allowance.Usage{}, nil
}

func (s *settles) SettleAllowance(_ context.Context, _, _ string, consumed int64, _ time.Time) error {
	s.calls = append(s.calls, consumed)
	return nil
}

// TestSaveSettlesTheAllowance: save ends the collection reservation on the
// outcomes of docs/design/decisions.md section 12 (succeeded consumes the
// captured amount, the other outcomes release all), once per change, and
// leaves it standing on every other status.
func TestSaveSettlesTheAllowance(t *testing.T) {
	s := &Service{NewID: func() string { return "ev" }}
	for _, tc := range []struct {
		from, to Status
		captured int64
		want     []int64
	}{
		{Processing, Succeeded, 1000, []int64{1000}},
		{Authorized, Succeeded, 600, []int64{600}},
		{Processing, Declined, 0, []int64{0}},
		{Processing, Failed, 0, []int64{0}},
		{Authorized, Canceled, 0, []int64{0}},
		{AwaitingPaymentData, Expired, 0, []int64{0}},
		{Processing, AwaitingPaymentData, 0, nil},
		{Processing, Authorized, 0, nil},
		{Processing, RequiresAction, 0, nil},
		{Succeeded, Refunded, 1000, nil},
		{Succeeded, Succeeded, 1000, nil},
	} {
		w := &writes{}
		p := &Payment{ID: "p", Status: tc.to, StoredStatus: tc.from, CapturedAmountMinor: tc.captured}
		if err := s.save(context.Background(), w, p); err != nil {
			t.Fatalf("%s → %s: %v", tc.from, tc.to, err)
		}
		if len(w.calls) != len(tc.want) || (len(tc.want) == 1 && w.calls[0] != tc.want[0]) {
			t.Errorf("%s → %s: settled %v, want %v", tc.from, tc.to, w.calls, tc.want)
		}
	}
}
