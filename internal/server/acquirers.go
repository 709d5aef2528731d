package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/provider"
)

// maxNotification bounds an acquirer's notification's body.
const maxNotification = 1 << 20

// acquirerNotification is POST /providers/{name}/webhooks: an acquirer
// tells of a change (docs/design/decisions.md section 16;
// docs/providers.md, "Notifications"). Outside /api/v1 and unsigned by
// Paygate's scheme: the acquirer's own signature is checked by its
// adapter; one that fails (missing, forged, stale) answers 400 and
// nothing is done. A verified one makes Paygate read the payment back
// from the acquirer and apply it as a poll would, within the request, so
// the payment reaches its status at once; it never moves anything by
// itself.
func (s *Server) acquirerNotification() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		p, err := s.providers.Provider(name)
		n, ok := p.(provider.Notifications)
		if err != nil || !ok {
			s.fail(w, r, fault.New(fault.NotFound, "no provider account takes notifications at this address"))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxNotification))
		if err != nil {
			s.fail(w, r, fault.New(fault.ValidationError, "the notification's body is too large or unreadable"))
			return
		}
		notice, err := n.VerifyNotification(r.Header, body)
		if err != nil {
			s.log.Warn("an acquirer's notification was refused", "provider", name, "error", err)
			s.fail(w, r, fault.New(fault.ValidationError, "the notification's signature is missing, wrong or too old"))
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 20*time.Second)
		defer cancel()
		if err := s.engine.Notified(ctx, name, notice); err != nil {
			// The acquirer sends it again later; polling stays the fallback.
			s.log.Warn("an acquirer's notification could not be applied yet", "provider", name, "event", notice.Event, "error", err)
			var f *fault.Error
			if !errors.As(err, &f) {
				f = fault.New(fault.Unavailable, "the notification could not be applied now; send it again")
			}
			s.fail(w, r, f)
			return
		}
		s.log.Debug("an acquirer's notification was applied", "provider", name, "event", notice.Event)
		writeJSON(w, http.StatusOK, []byte(`{"received":true}`))
	})
}
