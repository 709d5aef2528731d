package pages

import "net/http"

// The subscriptions with pause, resume and cancel pages (docs/cabinet.md). Not yet served.

// SubscriptionsData is what these pages read and change; internal/server adapts the
// store and the domain services to it.
type SubscriptionsData interface{}

// subscriptionRoutes registers these pages.
func (pg *Pages) subscriptionRoutes(handle func(string, http.Handler)) {}
