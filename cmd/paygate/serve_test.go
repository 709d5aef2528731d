package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProductionRefusesTheSandboxAcquirer(t *testing.T) {
	var stdout, stderr strings.Builder
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--environment", "production", "--sandbox-url", "http://127.0.0.1:1"}, getenvFrom(nil), nil, &stdout, &stderr)
	require.ErrorContains(t, err, "cannot be used in production")
}
