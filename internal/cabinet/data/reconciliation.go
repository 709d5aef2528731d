package data

import (
	"context"

	"github.com/paygate/paygate/internal/cabinet/pages"
)

// reconciliationPages is what the reconciliation pages read
// (pages.ReconciliationData; docs/reconciliation.md, "In the cabinet").
// Read-only.
type reconciliationPages struct{ *source }

var _ pages.ReconciliationData = reconciliationPages{}

func (c reconciliationPages) ReconciledDays(ctx context.Context, keyID, afterDay, afterAccount string, limit int) ([]pages.ReconciledDay, error) {
	days, err := c.store.KeyReconciledDays(ctx, keyID, afterDay, afterAccount, limit)
	out := make([]pages.ReconciledDay, len(days))
	for i, d := range days {
		out[i] = pages.ReconciledDay(d)
	}
	return out, err
}

func (c reconciliationPages) ReconciledDay(ctx context.Context, keyID, account, day string) (*pages.ReconciledDay, error) {
	d, err := c.store.KeyReconciledDay(ctx, keyID, account, day)
	if err != nil || d == nil {
		return nil, err
	}
	out := pages.ReconciledDay(*d)
	return &out, nil
}

func (c reconciliationPages) Breaks(ctx context.Context, keyID, account, day string, afterSeq, limit int) ([]pages.Break, error) {
	bs, err := c.store.KeyBreaks(ctx, keyID, account, day, afterSeq, limit)
	out := make([]pages.Break, len(bs))
	for i, b := range bs {
		out[i] = pages.Break(b)
	}
	return out, err
}
