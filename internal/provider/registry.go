package provider

import "fmt"

// Registry finds providers by the name channels use.
type Registry map[string]Provider

// Provider returns the named provider.
func (r Registry) Provider(name string) (Provider, error) {
	if p, ok := r[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("no provider %q is configured", name)
}
