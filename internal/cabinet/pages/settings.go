package pages

import "net/http"

// The allowances and channels pages (docs/cabinet.md). Not yet served.

// SettingsData is what these pages read and change; internal/server adapts the
// store and the domain services to it.
type SettingsData interface{}

// settingsRoutes registers these pages.
func (pg *Pages) settingsRoutes(handle func(string, http.Handler)) {}
