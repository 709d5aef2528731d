package instrument

import (
	"net/url"

	"github.com/paygate/paygate/internal/fault"
)

// CheckReturnURL applies the rule of docs/design/decisions.md section 15 for
// return_url: an absolute https URL with a host (http too in the sandbox),
// without credentials; anything else (javascript:, data:, ftp:, "https:host"
// without slashes, a bare "http://") is 400 validation_error on return_url at
// creation, not a provider failure later. Empty means none was given.
func CheckReturnURL(raw string, sandbox bool) *fault.Error {
	if raw == "" {
		return nil
	}
	bad := func(msg string) *fault.Error { return fault.OnField(fault.ValidationError, "return_url", msg) }
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Hostname() == "" {
		return bad("must be an absolute https URL with a host")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && sandbox:
	case u.Scheme == "http":
		return bad("must be an https URL in production")
	default:
		return bad("must be an absolute https URL (http also in the sandbox)")
	}
	if u.User != nil {
		return bad("must not carry credentials")
	}
	return nil
}
