package server_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// notYetServed are documented endpoints whose issue has not landed yet. The
// list only shrinks: when an endpoint is registered it must leave the list.
var notYetServed = map[string]bool{}

// TestRoutesMatchDocument: every registered API route (/api/v1 and the
// cabinet's JSON, /cabinet/v1) is in the OpenAPI
// document, and every documented operation is served or listed above.
func TestRoutesMatchDocument(t *testing.T) {
	e := newEnv(t, storetest.Databases(t)[0], options{})
	documented := map[string]bool{}
	for _, op := range openapi.Operations() {
		documented[op.Method+" "+op.Path] = true
	}
	served := map[string]bool{}
	for _, p := range e.server.Routes() {
		if !strings.Contains(p, " /api/") && !strings.Contains(p, " /cabinet/v1/") {
			continue // operational routes such as /metrics are not API
		}
		served[p] = true
		require.True(t, documented[p], "route %s is not in openapi.yaml", p)
		require.False(t, notYetServed[p], "route %s is served: remove it from notYetServed", p)
	}
	for op := range documented {
		require.True(t, served[op] || notYetServed[op], "documented operation %s is not served", op)
	}
}
