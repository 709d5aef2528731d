package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/logging"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/vault"
)

// dbFlags are the flags every command that opens the database shares.
type dbFlags struct {
	dataDir       string
	databaseURL   string
	environment   string
	masterKeyFile string
	masterKey     string // PAYGATE_MASTER_KEY: the key file's text
	logLevel      string
	clockFile     string // PAYGATE_CLOCK_FILE: the sandbox test hook of clock.go
	command       string // "serve", "keys create": the first line on stderr names it
	// create lets the command start a new data folder (the SQLite
	// database, the master key file) where there is none: serve and
	// migrate always, the admin commands only with --init.
	create    bool
	announced bool // where() was written
}

func (f *dbFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.dataDir, "data-dir", envOr(getenv, "PAYGATE_DATA_DIR", "./paygate-data"),
		"folder of the SQLite database and the master key file (PAYGATE_DATA_DIR)")
	fs.StringVar(&f.databaseURL, "database-url", getenv("PAYGATE_DATABASE_URL"),
		"postgres:// URL; empty: SQLite in the data folder (PAYGATE_DATABASE_URL)")
	fs.StringVar(&f.environment, "environment", envOr(getenv, "PAYGATE_ENVIRONMENT", merchant.Sandbox),
		"sandbox or production (PAYGATE_ENVIRONMENT)")
	fs.StringVar(&f.masterKeyFile, "master-key-file", getenv("PAYGATE_MASTER_KEY_FILE"),
		"file of the master keys that seal secrets; default DATA_DIR/master.key (PAYGATE_MASTER_KEY_FILE)")
	fs.StringVar(&f.logLevel, "log-level", envOr(getenv, "PAYGATE_LOG_LEVEL", "info"), "debug, info, warn or error (PAYGATE_LOG_LEVEL)")
	f.masterKey = getenv("PAYGATE_MASTER_KEY")
	f.clockFile = getenv("PAYGATE_CLOCK_FILE")
	f.command = fs.Name()
}

// registerInit adds --init to an admin command: without it the command
// refuses to start a new data folder, so that one run from another folder
// says so instead of answering from an empty database with a new master
// key (docs/cli.md, "Database flags").
func (f *dbFlags) registerInit(fs *flag.FlagSet) {
	fs.BoolVar(&f.create, "init", false, "start a new data folder (SQLite database, master key file) if there is none here")
}

// where says which data folder, database and master key a command uses:
// the first line it writes to stderr. A PostgreSQL URL is shown without
// its password or parameters.
func (f *dbFlags) where() string {
	dir, err := filepath.Abs(f.dataDir)
	if err != nil {
		dir = f.dataDir
	}
	keyFile, err := filepath.Abs(f.masterKeyPath())
	if err != nil {
		keyFile = f.masterKeyPath()
	}
	key := "master key " + keyFile
	if f.masterKey != "" {
		key = "master key from PAYGATE_MASTER_KEY"
	}
	if f.databaseURL == "" {
		return fmt.Sprintf("paygate %s: data folder %s, SQLite database %s, %s", f.command, dir,
			filepath.Join(dir, "paygate.db"), key)
	}
	shown := "(unreadable URL)"
	if u, err := url.Parse(f.databaseURL); err == nil {
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		u.RawQuery, u.Fragment = "", ""
		shown = u.String()
	}
	return fmt.Sprintf("paygate %s: PostgreSQL database %s, data folder %s, %s", f.command, shown, dir, key)
}

// masterKeyPath is the master key file: --master-key-file, else
// DATA_DIR/master.key.
func (f *dbFlags) masterKeyPath() string {
	if f.masterKeyFile != "" {
		return f.masterKeyFile
	}
	return filepath.Join(f.dataDir, "master.key")
}

// ready says where the command works (once) and refuses a data folder
// that is not there, unless the command may create one.
func (f *dbFlags) ready(stderr io.Writer) error {
	if !f.announced {
		fmt.Fprintln(stderr, f.where())
		f.announced = true
	}
	if m := f.missing(); m != "" && !f.create {
		return fmt.Errorf("%s: this is not a Paygate data folder yet. Run the command where serve runs, "+
			"name the folder with --data-dir (PAYGATE_DATA_DIR) and the database with --database-url, "+
			"or add --init to start a new one", m)
	}
	return nil
}

// missing names what of the data folder is not there yet (the SQLite
// database, the master key file), or "" when nothing is.
func (f *dbFlags) missing() string {
	var out []string
	if f.databaseURL == "" {
		if _, err := os.Stat(filepath.Join(f.dataDir, "paygate.db")); errors.Is(err, os.ErrNotExist) {
			out = append(out, "no SQLite database "+filepath.Join(f.dataDir, "paygate.db"))
		}
	}
	if f.masterKey == "" {
		if _, err := os.Stat(f.masterKeyPath()); errors.Is(err, os.ErrNotExist) {
			out = append(out, "no master key file "+f.masterKeyPath())
		}
	}
	return strings.Join(out, " and ")
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// opened is an opened Paygate database: the store, the master keys, the
// log and the clock. A command builds what it needs on it through the
// composition root (internal/app): services for the admin commands, the
// whole process for serve.
type opened struct {
	store     *store.Store
	keyring   *vault.Keyring
	log       *slog.Logger
	now       func() time.Time
	riverTime rivertype.TimeGenerator // nil: River's own clock; the clock hook otherwise
	env       string
	core      *app.App // services(), built once
}

// open opens and migrates the database, loads (or on first start creates)
// the master key, and seeds the BIN base and the sandbox channels.
func (f *dbFlags) open(ctx context.Context, stderr io.Writer) (*opened, error) {
	if f.environment != merchant.Sandbox && f.environment != merchant.Production {
		return nil, usageError{"--environment must be sandbox or production"}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, usageError{"--log-level must be debug, info, warn or error"}
	}
	now := time.Now
	var clock *fileClock
	if f.clockFile != "" {
		if f.environment == merchant.Production {
			return nil, usageError{"PAYGATE_CLOCK_FILE is a sandbox test hook: the production environment refuses it"}
		}
		var err error
		if clock, err = newFileClock(f.clockFile); err != nil {
			return nil, err
		}
		now = clock.Now
	}
	if err := f.ready(stderr); err != nil {
		return nil, err
	}
	log := logging.New(stderr, level)
	s, err := store.Open(ctx, store.Config{DatabaseURL: f.databaseURL, SQLitePath: filepath.Join(f.dataDir, "paygate.db")})
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	kr, err := f.keyring(ctx, s)
	if err != nil {
		s.Close()
		return nil, err
	}
	a := &opened{store: s, keyring: kr, log: log, now: now, env: f.environment}
	if clock != nil {
		a.riverTime = clock
		log.Warn("the clock is moved by a test hook", "PAYGATE_CLOCK_FILE", f.clockFile, "now", now())
	}
	if err := app.Seed(ctx, s, f.environment, now); err != nil {
		s.Close()
		return nil, err
	}
	return a, nil
}

// config is the composition root's configuration of a process on a, with
// the acquirers of providers.
func (a *opened) config(providers provider.Registry) app.Config {
	return app.Config{Store: a.store, Keyring: a.keyring, Now: a.now, Log: a.log, RiverTime: a.riverTime,
		Environment: a.env, Version: version, Providers: providers, Resolver: net.DefaultResolver}
}

// services is the composition root of a command that calls no acquirer
// and runs no job: the admin commands' services.
func (a *opened) services() (*app.App, error) {
	if a.core != nil {
		return a.core, nil
	}
	core, err := app.New(a.config(provider.Registry{}))
	if err != nil {
		return nil, err
	}
	a.core = core
	return core, nil
}

// keyring loads the master key: PAYGATE_MASTER_KEY, else the key file. The
// file is created only while the database holds no sealed secret, so a
// missing file can never silently orphan existing keys.
func (f *dbFlags) keyring(ctx context.Context, s *store.Store) (*vault.Keyring, error) {
	if f.masterKey != "" {
		return vault.Parse(f.masterKey)
	}
	path := f.masterKeyPath()
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		keys, err := s.ListKeys(ctx)
		if err != nil {
			return nil, err
		}
		if len(keys) > 0 {
			return nil, fmt.Errorf("master key file %s is missing but the database holds %d sealed key secrets; restore the file or set PAYGATE_MASTER_KEY", path, len(keys))
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
	}
	return vault.LoadOrCreate(path)
}

func (a *opened) close() { a.store.Close() }

// dbCommand starts "GROUP SUB [flags]", a command that opens the database:
// its flag set with the database flags and --json.
func dbCommand(group, subs string, args []string, getenv func(string) string, stderr io.Writer) (*flag.FlagSet, *dbFlags, *bool, error) {
	if len(args) == 0 {
		return nil, nil, nil, usageError{group + " needs " + subs}
	}
	fs := newFlagSet(group+" "+args[0], stderr)
	db := &dbFlags{}
	db.register(fs, getenv)
	db.registerInit(fs)
	return fs, db, fs.Bool("json", false, "print JSON"), nil
}
