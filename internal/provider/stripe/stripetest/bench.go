package stripetest

import (
	"net/http"
	"testing"
)

// Standalone is a fake for a program rather than a test: bench's
// failover-stripe check serves Handler on a listener of its own, so that
// the fake can go down (its address refusing connections) and come back
// on the same address with its state. url is the address the caller
// serves it on (the fake's pages link to it).
func Standalone(url string) *Fake {
	f := NewFake(program{})
	f.Close()
	f.URL = url
	return f
}

// Handler is the fake's API and pages, for a caller that serves it.
func (f *Fake) Handler() http.Handler { return http.HandlerFunc(f.serve) }

// program stands in for the testing.TB that NewFake takes: NewFake only
// registers the closing of its own server, which Standalone closes itself.
type program struct{ testing.TB }

func (program) Cleanup(func()) {}
func (program) Helper()        {}
