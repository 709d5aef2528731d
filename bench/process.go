package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// paygateBinary returns the Paygate binary this process's runs and checks
// share: PAYGATE_BENCH_BINARY when set (to measure another version with
// this harness), else cmd/paygate built once into a temporary folder, which
// removeBinary deletes. Run from the repository or below it.
func paygateBinary(ctx context.Context) (string, error) {
	if bin := os.Getenv("PAYGATE_BENCH_BINARY"); bin != "" {
		return bin, nil
	}
	built.Lock()
	defer built.Unlock()
	if built.path != "" {
		if _, err := os.Stat(built.path); err == nil {
			return built.path, nil
		}
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	if built.dir == "" {
		if built.dir, err = os.MkdirTemp("", "paygate-build-"); err != nil {
			return "", err
		}
	}
	path := filepath.Join(built.dir, "paygate")
	build := exec.CommandContext(ctx, "go", "build", "-o", path, "./cmd/paygate")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build cmd/paygate: %w", err)
	}
	built.path = path
	return path, nil
}

// removeBinary deletes the binary paygateBinary built.
func removeBinary() {
	built.Lock()
	defer built.Unlock()
	if built.dir != "" {
		os.RemoveAll(built.dir)
		built.dir, built.path = "", ""
	}
}

var built struct {
	sync.Mutex
	dir, path string
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// paygateSpec says how to start one Paygate process.
type paygateSpec struct {
	bin         string
	dataDir     string   // SQLite data folder (also holds the master key file)
	databaseURL string   // PostgreSQL; empty: SQLite in dataDir
	role        string   // all, api or worker; empty: all
	addr        string   // empty: 127.0.0.1:0
	args        []string // more serve flags
	env         []string // more environment (PAYGATE_CRASH_AT, …)
}

// paygate is a started process.
type paygate struct {
	cmd                 *exec.Cmd
	url, access, secret string // access and secret: only when this process created the first key
	startup             time.Duration
	out                 *lineWaiter
	exited              chan struct{}
}

var (
	listeningRe = regexp.MustCompile(`listening on (http://\S+) \(started in ([^,]+),`)
	firstKeyRe  = regexp.MustCompile(`access key\s+(ak_\S+)\s+secret\s+(sk_\S+)`)
)

// startPaygate starts serve and waits until it listens. The rate limit is
// off unless spec.args sets it.
func startPaygate(ctx context.Context, spec paygateSpec) (*paygate, error) {
	addr := spec.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	args := []string{"serve", "--addr", addr, "--data-dir", spec.dataDir, "--rate-limit", "0", "--log-level", "warn"}
	if spec.databaseURL != "" {
		args = append(args, "--database-url", spec.databaseURL)
	}
	if spec.role != "" {
		args = append(args, "--role", spec.role)
	}
	args = append(args, spec.args...)
	cmd := exec.CommandContext(ctx, spec.bin, args...)
	cmd.Env = append(os.Environ(), spec.env...)
	out := &lineWaiter{re: listeningRe, found: make(chan []string, 1)}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &paygate{cmd: cmd, out: out, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	select {
	case m := <-out.found:
		p.url = m[1]
		p.startup, _ = time.ParseDuration(m[2])
		if keys := firstKeyRe.FindStringSubmatch(out.String()); keys != nil {
			p.access, p.secret = keys[1], keys[2]
		}
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("paygate exited before listening: %s", out.String())
	case <-time.After(60 * time.Second):
		p.kill()
		return nil, fmt.Errorf("paygate did not start: %s", out.String())
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *paygate) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// stop sends SIGTERM (a graceful stop) and waits.
func (p *paygate) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(40 * time.Second):
		p.kill()
	}
}

// postgresBase is the server fresh databases are created on:
// PAYGATE_BENCH_DATABASE_URL, else PAYGATE_TEST_DATABASE_URL, else the local
// server.
func postgresBase() string {
	for _, v := range []string{"PAYGATE_BENCH_DATABASE_URL", "PAYGATE_TEST_DATABASE_URL"} {
		if s := os.Getenv(v); s != "" {
			return s
		}
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// freshPostgres creates an empty database and returns its URL and a
// function that drops it.
func freshPostgres(ctx context.Context) (string, func(), error) {
	base := postgresBase()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	name := "paygate_bench_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return "", nil, err
	}
	url := regexp.MustCompile(`/[^/?]*(\?|$)`).ReplaceAllString(base[len("postgres://"):], "/"+name+"$1")
	return "postgres://" + url, func() {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		admin.Close()
	}, nil
}

// lineWaiter collects output and reports the first match of re.
type lineWaiter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	re    *regexp.Regexp
	found chan []string
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.re != nil {
		if m := w.re.FindStringSubmatch(w.buf.String()); m != nil {
			w.found <- m
			w.re = nil
		}
	}
	return len(p), nil
}

func (w *lineWaiter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

var errNoKey = errors.New("no sandbox key printed")
