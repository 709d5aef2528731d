package pages

import "net/http"

// The webhook endpoints and the event log with resend pages (docs/cabinet.md). Not yet served.

// WebhooksData is what these pages read and change; internal/server adapts the
// store and the domain services to it.
type WebhooksData interface{}

// webhookRoutes registers these pages.
func (pg *Pages) webhookRoutes(handle func(string, http.Handler)) {}
