package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/webhook"
)

// verify is the standard-library verification of docs/webhooks.md, kept
// here so that the documented code is known to work.
func verify(secret string, r *http.Request) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	id := r.Header.Get("webhook-id")
	ts := r.Header.Get("webhook-timestamp")
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || math.Abs(time.Since(time.Unix(sent, 0)).Seconds()) > 300 {
		return nil, errors.New("webhook timestamp missing or too far from now")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(r.Header.Get("webhook-signature")) {
		version, value, _ := strings.Cut(sig, ",")
		if version == "v1" && hmac.Equal([]byte(value), []byte(want)) {
			return body, nil
		}
	}
	return nil, errors.New("no valid signature")
}

func TestDocumentedVerification(t *testing.T) {
	secret, other := webhook.NewSecret(), webhook.NewSecret()
	body := []byte(`{"id":"e"}`)
	h, _ := webhook.SignedHeaders([]string{other, secret}, "e", time.Now(), body)
	r := httptest.NewRequest("POST", "/", strings.NewReader(string(body)))
	for k, v := range h {
		r.Header.Set(k, v)
	}
	if _, err := verify(secret, r); err != nil {
		t.Fatal(err)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(string(body)+" "))
	for k, v := range h {
		r.Header.Set(k, v)
	}
	if _, err := verify(secret, r); err == nil {
		t.Fatal("tampered accepted")
	}
}
