package pages

import "net/http"

// The verifications and payouts pages (docs/cabinet.md). Not yet served.

// ActivityData is what these pages read and change; internal/server adapts the
// store and the domain services to it.
type ActivityData interface{}

// activityRoutes registers these pages.
func (pg *Pages) activityRoutes(handle func(string, http.Handler)) {}
