package data

import (
	"context"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/merchant"
)

// settingsPages is what the allowances and channels pages read
// (pages.SettingsData; docs/cabinet.md, "Allowances" and "Channels").
// Read-only.
type settingsPages struct{ *source }

var _ pages.SettingsData = settingsPages{}

// Allowances are the figures listLimits (GET /limits) answers, at the
// key's clock: the allowance day is the UTC date of the key's time
// (docs/design/decisions.md sections 12 and 14).
func (c settingsPages) Allowances(ctx context.Context, key merchant.Key) (pages.AllowanceDay, error) {
	now := c.keyNow(keyClock(ctx, key))
	d := pages.AllowanceDay{Now: now}
	settings, err := c.store.ListAllowances(ctx, key.ID)
	if err != nil {
		return d, err
	}
	for _, set := range settings {
		u, err := c.store.AllowanceUsage(ctx, key.ID, set.Allowance, set.Currency, allowance.Day(now))
		if err != nil {
			return d, err
		}
		d.Items = append(d.Items, allowance.FiguresOf(set, u, now))
	}
	return d, nil
}

// Channels are the key's channels as listPaymentChannels (GET
// /payment-channels) shows them, with their provider profile's
// capabilities. A channel holds no provider secret.
func (c settingsPages) Channels(ctx context.Context, keyID string) ([]pages.ChannelInfo, error) {
	chs, err := c.store.ChannelsForKey(ctx, keyID)
	if err != nil {
		return nil, err
	}
	out := make([]pages.ChannelInfo, 0, len(chs))
	for _, ch := range chs {
		info := pages.ChannelInfo{ID: ch.ID, Alias: ch.Alias, PaymentMethods: ch.PaymentMethods,
			Currencies: ch.Currencies, CheckoutMode: ch.CheckoutMode}
		if c.providers != nil {
			if prov, err := c.providers.Provider(ch.Provider); err == nil {
				if caps, err := prov.Capabilities(ch.Profile); err == nil {
					info.Capabilities = make([]string, len(caps))
					for i, cp := range caps {
						info.Capabilities[i] = string(cp)
					}
				}
			}
		}
		out = append(out, info)
	}
	return out, nil
}
