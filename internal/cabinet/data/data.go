// Package data adapts the store and the domain services to what the
// merchant cabinet's pages read and change (pages.Data; docs/cabinet.md):
// one type per area of the pages, each in the area's file. It calls the
// store's methods, never SQL, and serves no HTTP (internal/archtest); the
// composition root builds it and hands it to the server, which builds the
// pages (docs/architecture.md, "The composition root"). Every call reads
// the database: nothing is cached.
package data

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/webhook"
)

// source is what every area reads and acts through.
type source struct {
	store *store.Store
	now   func() time.Time
	// providers say a channel's capabilities; nil: none are shown.
	providers Providers
	// subscriptions act on a subscription; nil: the actions are not found.
	subscriptions *subscription.Service
	webhooks      *webhook.Service
}

// Providers finds a channel's provider.
type Providers interface {
	Provider(name string) (provider.Provider, error)
}

// New returns the pages' data over st. now is the process clock, which a
// sandbox key's offset moves (docs/design/decisions.md section 14); subs
// and hooks pause, resume or cancel a subscription and resend an event for
// the pages as the signed API does.
func New(st *store.Store, now func() time.Time, providers Providers, subs *subscription.Service,
	hooks *webhook.Service) pages.Data {
	src := &source{store: st, now: now, providers: providers, subscriptions: subs, webhooks: hooks}
	return pages.Data{Payments: paymentPages{src}, Cards: cardPages{src}, Activity: activityPages{src},
		Subscriptions: subscriptionPages{src}, Webhooks: webhookPages{src}, Settings: settingsPages{src},
		Reconciliation: reconciliationPages{src}}
}

// keyClock is ctx at key's clock, as internal/server's pipeline sets it
// for the key's signed requests: a sandbox key's offset, none in
// production.
func keyClock(ctx context.Context, key merchant.Key) context.Context {
	if key.Environment != merchant.Sandbox {
		return clock.With(ctx, 0)
	}
	return clock.With(ctx, key.ClockOffset)
}

// keyNow is the time by the clock ctx carries.
func (s *source) keyNow(ctx context.Context) time.Time { return clock.Now(ctx, s.now) }
