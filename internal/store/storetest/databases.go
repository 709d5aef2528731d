// Package storetest opens real databases for tests: SQLite in a temporary
// folder always, and PostgreSQL when PAYGATE_TEST_DATABASE_URL names a
// server (each test gets a database of its own, dropped afterwards). With
// PAYGATE_REQUIRE_POSTGRES=1 (set by .ci/run) a missing PostgreSQL fails the
// test instead of skipping it, so CI cannot pass without the second database.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/store"
)

// Database is one database a suite runs against.
type Database struct {
	Name string
	// Config opens a fresh, empty database of this kind.
	Config func(t testing.TB) store.Config
}

// Databases lists the databases to run suites against.
func Databases(t testing.TB) []Database {
	dbs := []Database{{Name: "sqlite", Config: func(t testing.TB) store.Config {
		return store.Config{SQLitePath: filepath.Join(t.TempDir(), "paygate.db")}
	}}}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		dbs = append(dbs, Database{Name: "postgres", Config: func(t testing.TB) store.Config {
			return store.Config{DatabaseURL: NewPostgresDatabase(t)}
		}})
	} else if os.Getenv("PAYGATE_REQUIRE_POSTGRES") == "1" {
		t.Fatal("PAYGATE_REQUIRE_POSTGRES=1 but PAYGATE_TEST_DATABASE_URL is empty: the PostgreSQL suite would be skipped")
	}
	return dbs
}

// NewPostgresDatabase creates an empty database on the server of
// PAYGATE_TEST_DATABASE_URL and returns its URL; it is dropped when the test ends.
func NewPostgresDatabase(t testing.TB) string {
	t.Helper()
	base := os.Getenv("PAYGATE_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("PAYGATE_TEST_DATABASE_URL is not set")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "paygate_test_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// Open opens and migrates a fresh store of the database, closed at the end.
func Open(t testing.TB, db Database) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), db.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}
