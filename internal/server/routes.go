package server

import (
	"net/http"

	"github.com/paygate/paygate/internal/subscription"
)

// routes maps the entire HTTP surface. Every /api/v1 and /cabinet/v1 route
// is in the OpenAPI document (routes_test.go checks it). Endpoints of later issues are
// not registered until they work: an unknown path answers 404.
func (s *Server) routes(mux *http.ServeMux) {
	handle := func(pattern string, h http.Handler) {
		s.patterns = append(s.patterns, pattern)
		mux.Handle(pattern, s.route(pattern, h))
	}

	handle("GET /api/v1/health", s.health())
	handle("GET /api/v1/openapi.json", s.openapiDocument())
	if s.metrics != nil && !s.cfg.MetricsApart {
		handle("GET /metrics", s.metrics.Handler())
	}
	if s.cfg.OpsOnly {
		return // a worker process: no API, no pages
	}

	handle("POST /api/v1/payment-sessions", s.createSession())
	handle("GET /api/v1/payment-sessions/{id}", s.getSession())
	handle("GET /api/v1/payment-channels", s.listChannels())
	handle("GET /api/v1/cards/information", s.cardInformation())
	handle("GET /api/v1/limits", s.listLimits())

	handle("POST /api/v1/payments/direct", s.createDirect())
	handle("GET /api/v1/payments", s.listPayments())
	handle("GET /api/v1/payments/{id}", s.getPayment())
	handle("POST /api/v1/payments/{id}/confirm", s.confirmPayment())
	handle("POST /api/v1/payments/{id}/capture", s.capturePayment())
	handle("POST /api/v1/payments/{id}/cancel", s.cancelPayment())
	handle("GET /api/v1/payments/{id}/attempts", s.listAttempts())
	handle("GET /api/v1/payments/{id}/refunds", s.listRefunds())
	handle("POST /api/v1/payments/{id}/refunds", s.refundPayment())

	if s.verifications != nil {
		handle("POST /api/v1/card-verifications", s.createVerification())
		handle("GET /api/v1/card-verifications/{id}", s.getVerification())
		handle("POST /api/v1/card-verifications/{id}/verify", s.verifyVerification())
	}
	if s.subscriptions != nil {
		handle("POST /api/v1/subscriptions", s.createSubscription())
		handle("GET /api/v1/subscriptions/{id}", s.getSubscription())
		handle("POST /api/v1/subscriptions/{id}/pause", s.actOnSubscription(subscription.Pause))
		handle("POST /api/v1/subscriptions/{id}/resume", s.actOnSubscription(subscription.Resume))
		handle("POST /api/v1/subscriptions/{id}/cancel", s.actOnSubscription(subscription.Cancel))
		handle("GET /api/v1/mandates/{id}", s.getMandate())
	}
	handle("GET /api/v1/sandbox/clock", s.getSandboxClock())
	handle("POST /api/v1/sandbox/clock/advance", s.advanceSandboxClock())
	handle("POST /api/v1/payouts", s.createPayout())
	handle("GET /api/v1/payouts/{id}", s.getPayout())
	handle("POST /api/v1/payouts/{id}/confirm", s.confirmPayout())

	handle("POST /api/v1/webhook-endpoints", s.createWebhookEndpoint())
	handle("GET /api/v1/webhook-endpoints", s.listWebhookEndpoints())
	handle("DELETE /api/v1/webhook-endpoints/{id}", s.deleteWebhookEndpoint())
	handle("GET /api/v1/events", s.listEvents())
	handle("GET /api/v1/events/{id}", s.getEvent())
	handle("POST /api/v1/events/{id}/resend", s.resendEvent())

	// The merchant cabinet's stored cards: signed and scoped like /api/v1
	// (docs/design/decisions.md section 13; tokens.go).
	handle("GET /cabinet/v1/payment-method-tokens", s.listPaymentMethodTokens())
	handle("DELETE /cabinet/v1/payment-method-tokens/{id}", s.deletePaymentMethodToken())
	// Its payments' export (CSV, streamed) and totals, with the list's
	// filters (cabinet_export.go).
	handle("GET /cabinet/v1/payments/export", s.exportPayments())
	handle("GET /cabinet/v1/payments/totals", s.paymentTotals())

	// Acquirers' notifications: signed by the acquirer, not by a key
	// (acquirers.go).
	if s.providers != nil && s.engine != nil {
		handle("POST /providers/{name}/webhooks", s.acquirerNotification())
	}

	// The hosted checkout: pages for payers, not API (docs/checkout.md;
	// internal/checkout).
	handle("GET /checkout/{id}", s.checkout.Page())
	handle("POST /checkout/{id}", s.checkout.Submit())
	handle("GET /checkout/{id}/return", s.checkout.Return())
	handle("POST /checkout/{id}/confirm", s.checkout.Confirm())
	handle("GET /assets/{file}", s.checkout.Asset())

	// The merchant cabinet's pages for merchants' staff (docs/cabinet.md;
	// internal/cabinet/pages).
	if pg := s.cabinet; pg != nil {
		handle("GET /cabinet/setup/{token}", pg.SetupPage())
		handle("POST /cabinet/setup/{token}", pg.Setup())
		handle("GET /cabinet/sign-in", pg.SignInPage())
		handle("POST /cabinet/sign-in", pg.SignIn())
		handle("POST /cabinet/sign-out", pg.SignOut())
		handle("GET /cabinet/{$}", pg.Home())

		handle("GET /cabinet/payments", pg.PaymentsPage())
		handle("GET /cabinet/payments/{id}", pg.PaymentPage())
		handle("GET /cabinet/payments/export", pg.ExportPayments())
		handle("GET /cabinet/payments/totals", pg.TotalsPage())
		handle("GET /cabinet/cards", pg.CardsPage())
		handle("POST /cabinet/cards/{id}/delete", pg.DeleteCard())
		handle("GET /cabinet/verifications", pg.VerificationsPage())
		handle("GET /cabinet/verifications/{id}", pg.VerificationPage())
		handle("GET /cabinet/payouts", pg.PayoutsPage())
		handle("GET /cabinet/payouts/{id}", pg.PayoutPage())

		handle("GET /cabinet/subscriptions", pg.SubscriptionsPage())
		handle("GET /cabinet/subscriptions/{id}", pg.SubscriptionPage())
		handle("POST /cabinet/subscriptions/{id}/pause", pg.ActOnSubscription(subscription.Pause))
		handle("POST /cabinet/subscriptions/{id}/resume", pg.ActOnSubscription(subscription.Resume))
		handle("POST /cabinet/subscriptions/{id}/cancel", pg.ActOnSubscription(subscription.Cancel))

		handle("GET /cabinet/webhooks", pg.WebhooksPage())
		handle("GET /cabinet/events", pg.EventsPage())
		handle("GET /cabinet/events/{id}", pg.EventPage())
		handle("POST /cabinet/events/{id}/resend", pg.ResendEvent())
		handle("GET /cabinet/allowances", pg.AllowancesPage())
		handle("GET /cabinet/channels", pg.ChannelsPage())
		handle("GET /cabinet/reconciliation", pg.ReconciliationPage())
		handle("GET /cabinet/reconciliation/{account}/{day}", pg.ReconciliationDayPage())
		handle("GET /cabinet/reconciliation/{account}/{day}/breaks.csv", pg.ReconciliationCSV())
	}
}

// Routes lists the registered patterns ("METHOD /path"), in order.
func (s *Server) Routes() []string { return append([]string(nil), s.patterns...) }
