package webhook

import (
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The Standard Webhooks headers every delivery carries.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// Sign signs a message per Standard Webhooks, with the library itself:
// HMAC-SHA256 over "<id>.<unix seconds>.<body>" with each secret
// (whsec_…), as "v1,<base64>" values joined by spaces. Several secrets are
// used during a rotation overlap; receivers accept the message when any
// signature verifies.
func Sign(secrets []string, id string, at time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			return "", err
		}
		sig, err := wh.Sign(id, at, body)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// SignedHeaders are the three Standard Webhooks headers of a message.
func SignedHeaders(secrets []string, id string, at time.Time, body []byte) (map[string]string, error) {
	sig, err := Sign(secrets, id, at, body)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		HeaderID:        id,
		HeaderTimestamp: strconv.FormatInt(at.Unix(), 10),
		HeaderSignature: sig,
	}, nil
}
