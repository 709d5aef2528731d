package acquirer

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/paygate/paygate/internal/provider/sandbox"
)

// BenchmarkPay is one charge through the adapter over loopback HTTP, with
// and without the state file: the journal keeps a change's cost flat
// however much the sandbox already holds.
func BenchmarkPay(b *testing.B) {
	for name, file := range map[string]bool{"memory": false, "state-file": true} {
		b.Run(name, func(b *testing.B) {
			cfg := Config{}
			if file {
				cfg.StateFile = filepath.Join(b.TempDir(), "sandbox.json")
			}
			run, err := Start(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer run.Close()
			a := sandbox.NewAdapter(run.URL, run.APIKey, nil)
			ctx := context.Background()
			for b.Loop() {
				if _, err := a.Pay(ctx, payReq("4242424242424242")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
