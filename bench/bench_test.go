package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain removes the Paygate binary the tests shared.
func TestMain(m *testing.M) {
	code := m.Run()
	removeBinary()
	os.Exit(code)
}

// databases runs f once per database: SQLite always, PostgreSQL when
// PAYGATE_TEST_DATABASE_URL is set (required when PAYGATE_REQUIRE_POSTGRES
// is, as in CI).
func databases(t *testing.T, f func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, "sqlite") })
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv("PAYGATE_TEST_DATABASE_URL") == "" {
			if os.Getenv("PAYGATE_REQUIRE_POSTGRES") != "" {
				t.Fatal("PAYGATE_REQUIRE_POSTGRES is set but PAYGATE_TEST_DATABASE_URL is not set")
			}
			t.Skip("PAYGATE_TEST_DATABASE_URL is not set")
		}
		f(t, "postgres")
	})
}

// runSmall runs a check at a small size and fails the test unless it
// passes; its report goes to the test log.
func runSmall(t *testing.T, name string, c checkConfig) checkResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c.dir = t.TempDir()
	var log strings.Builder
	c.log = &log
	res, err := checks[name](ctx, c)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, log.String())
	}
	var out strings.Builder
	res.print(&out)
	t.Log("\n" + out.String())
	if !res.pass {
		t.Fatalf("%s failed: %s\n%s", name, res.failure, log.String())
	}
	return res
}
