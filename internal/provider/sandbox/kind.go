package sandbox

import (
	"errors"
	"net/http"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/account"
)

// Kind puts a standalone sandbox acquirer (`paygate sandbox-acquirer`)
// behind a provider account: `paygate providers add --kind sandbox --url
// URL --api-key-file F` (docs/design/decisions.md section 16). The
// production environment refuses it. The built-in account "sandbox" is an
// adapter of this kind too, made by serve.
func Kind() account.Kind {
	return account.Kind{
		Name: "sandbox",
		Check: func(environment, baseURL string, c account.Credentials) error {
			if environment == merchant.Production {
				return errors.New("the production environment refuses sandbox accounts")
			}
			if baseURL == "" {
				return errors.New("--url is required: the sandbox acquirer's address (paygate sandbox-acquirer prints it)")
			}
			if c.APIKey == "" {
				return errors.New("--api-key-file is required: a file holding the sandbox acquirer's API key")
			}
			return nil
		},
		New: func(name, baseURL string, c account.Credentials, client *http.Client) (provider.Provider, error) {
			a := NewAdapter(baseURL, c.APIKey, client)
			a.name = name
			return a, nil
		},
		Origins: func(baseURL string) []string { return []string{baseURL} },
	}
}
