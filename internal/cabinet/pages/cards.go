package pages

import "net/http"

// The saved cards (masked) with delete pages (docs/cabinet.md). Not yet served.

// CardsData is what these pages read and change; internal/server adapts the
// store and the domain services to it.
type CardsData interface{}

// cardRoutes registers these pages.
func (pg *Pages) cardRoutes(handle func(string, http.Handler)) {}
