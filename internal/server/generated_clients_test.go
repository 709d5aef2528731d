package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/store/storetest"
)

// The document is checked the way merchants consume it (docs/api.md,
// "Contributors: checking the document"): a linter, and clients generated
// by openapi-typescript and oapi-codegen that must compile and make a
// signed call. The npm tools are pinned in tools/openapi (package.json,
// package-lock.json); `npm ci --no-audit --no-fund` there installs them
// (.ci/run does). oapi-codegen is pinned below, and what its client needs
// in testdata/oapiclient/go.mod; the go command fetches them.

// toolsDir is tools/openapi, from this package's folder.
const toolsDir = "../../tools/openapi"

// documentPath is the contract, from this package's folder.
const documentPath = "../../internal/openapi/openapi.yaml"

// requireNode skips the test when tools/openapi/node_modules is absent,
// unless PAYGATE_REQUIRE_NODE=1 (CI), which fails it instead.
func requireNode(t *testing.T) (node string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(toolsDir, "node_modules", ".bin", "redocly"))
	}
	if err != nil {
		if os.Getenv("PAYGATE_REQUIRE_NODE") == "1" {
			t.Fatalf("PAYGATE_REQUIRE_NODE=1 but node or tools/openapi/node_modules is missing (npm ci in tools/openapi): %v", err)
		}
		t.Skipf("node or tools/openapi/node_modules is missing (npm ci --no-audit --no-fund in tools/openapi): %v", err)
	}
	return node
}

// runTool runs a command in dir and fails the test with its output if it fails.
func runTool(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v:\n%s", name, args, out)
	return out
}

// TestRedoclyLint: the document passes Redocly's recommended-strict rules
// as configured in tools/openapi/redocly.yaml (each exception justified
// there).
func TestRedoclyLint(t *testing.T) {
	node := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	doc, err := filepath.Abs(documentPath)
	require.NoError(t, err)
	runTool(t, ctx, toolsDir, []string{"REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true"},
		node, "node_modules/@redocly/cli/bin/cli.js", "lint", "--config", "redocly.yaml", doc)
}

// TestTypeScriptClient generates types from the document with
// openapi-typescript, compiles tools/openapi/client.ts against them with
// `tsc --strict`, and runs it against a live server: one signed call that
// creates a hosted payment session, which the Go client then reads.
func TestTypeScriptClient(t *testing.T) {
	node := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tools, err := filepath.Abs(toolsDir)
	require.NoError(t, err)
	doc, err := filepath.Abs(documentPath)
	require.NoError(t, err)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(tools, "client.ts"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "client.ts"), src, 0o644))

	runTool(t, ctx, tools, nil, node, "node_modules/openapi-typescript/bin/cli.js", doc, "-o", filepath.Join(dir, "schema.d.ts"))
	runTool(t, ctx, dir, nil, node, filepath.Join(tools, "node_modules/typescript/bin/tsc"),
		"--strict", "--noEmitOnError", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext",
		"--typeRoots", filepath.Join(tools, "node_modules/@types"), "--types", "node",
		"--outDir", "out", "client.ts", "schema.d.ts")

	db := storetest.Databases(t)[0]
	e := newEnv(t, db, options{})
	k, err := e.merchants.Create(ctx, merchant.NewKey{Name: "typescript"})
	require.NoError(t, err)
	out := runTool(t, ctx, dir, []string{"PAYGATE_ACCESS_KEY=" + k.Key.AccessKey, "PAYGATE_SECRET=" + k.Secret},
		node, filepath.Join("out", "client.js"), e.url)
	var got struct {
		PaymentID string `json:"payment_id"`
		Status    string `json:"status"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Equal(t, "created", got.Status)

	// The payment exists for that key, as the client said.
	c := client.New(e.url, k.Key.AccessKey, k.Secret)
	c.Now, c.Retries = e.clock.Now, 0
	var p struct {
		Status      string `json:"status"`
		AmountMinor int64  `json:"amount_minor"`
	}
	require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+got.PaymentID, nil, &p))
	require.Equal(t, "created", p.Status)
	require.Equal(t, int64(1250), p.AmountMinor)
}

// oapiClientDir holds the Go merchant's side of TestOapiCodegenClient: a
// module (go.mod and go.sum pin what the generated code needs), the
// generator's configuration and main.go, a program on the generated client.
const oapiClientDir = "testdata/oapiclient"

// signingPage is the merchant's guide to signing, whose Go code the
// program signs with.
const signingPage = "../../docs/signing.md"

// TestOapiCodegenClient generates the Go client from the document with
// oapi-codegen v2.8.2 in a temporary module (a copy of testdata/oapiclient),
// adds the Go signing code of docs/signing.md, builds the program and runs
// it against a live server: it creates a hosted payment session with a
// signed call, signing in a request editor as a Go merchant would, reads
// the payment, an error answer and the health through the generated types,
// and prints what it read. The generator and the modules the generated code
// needs come from the module proxy, or from the module cache once
// downloaded: without them (offline) the test skips, except in CI
// (CI=true), where it fails.
func TestOapiCodegenClient(t *testing.T) {
	program := buildOapiCodegenClient(t)
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		k, err := e.merchants.Create(ctx, merchant.NewKey{Name: "oapi-codegen"})
		require.NoError(t, err)
		out := runTool(t, ctx, t.TempDir(), []string{"PAYGATE_ACCESS_KEY=" + k.Key.AccessKey, "PAYGATE_SECRET=" + k.Secret},
			program, e.url)

		var got struct {
			Created struct {
				PaymentID   string `json:"payment_id"`
				SessionID   string `json:"session_id"`
				Status      string `json:"status"`
				AmountMinor int64  `json:"amount_minor"`
				Currency    string `json:"currency"`
			} `json:"created"`
			Read struct {
				PaymentID string `json:"payment_id"`
				Status    string `json:"status"`
			} `json:"read"`
			Missing struct {
				HTTPStatus int    `json:"http_status"`
				Code       string `json:"code"`
			} `json:"missing"`
			Health struct {
				Version        string `json:"version"`
				ServiceVersion string `json:"service_version"`
			} `json:"health"`
		}
		require.NoError(t, json.Unmarshal(out, &got), "%s", out)
		require.Equal(t, "created", got.Created.Status)
		require.Equal(t, int64(990), got.Created.AmountMinor)
		require.Equal(t, "EUR", got.Created.Currency)
		require.NotEmpty(t, got.Created.SessionID)
		require.Equal(t, got.Created.PaymentID, got.Read.PaymentID)
		require.Equal(t, "created", got.Read.Status)
		// An error answer decodes into the generated envelope.
		require.Equal(t, http.StatusNotFound, got.Missing.HTTPStatus)
		require.Equal(t, "not_found", got.Missing.Code)
		require.Equal(t, "1.2.0", got.Health.Version)
		require.Equal(t, "test", got.Health.ServiceVersion)

		// The payment exists for that key, as the client said.
		c := client.New(e.url, k.Key.AccessKey, k.Secret)
		c.Now, c.Retries = e.clock.Now, 0
		var p struct {
			Status      string `json:"status"`
			AmountMinor int64  `json:"amount_minor"`
		}
		require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payments/"+got.Created.PaymentID, nil, &p))
		require.Equal(t, "created", p.Status)
		require.Equal(t, int64(990), p.AmountMinor)
	})
}

// buildOapiCodegenClient copies testdata/oapiclient into a temporary
// folder, generates package oapiclient there from the document, adds
// sign.go (the Go code of docs/signing.md) and builds the program, whose
// path it returns. Fetching the generator or the modules is the only step
// allowed to skip (offline, outside CI); a document the generator refuses
// or a client that does not compile fails the test.
func buildOapiCodegenClient(t *testing.T) (program string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	doc, err := filepath.Abs(documentPath)
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum", "main.go", "oapi-codegen.yaml"} {
		src, err := os.ReadFile(filepath.Join(oapiClientDir, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), src, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sign.go"), []byte(signingCode(t)), 0o644))

	// The module's go.mod and go.sum are complete: nothing may change them.
	// The generator is installed in dir/bin.
	goEnv := []string{"GOWORK=off", "GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=readonly"),
		"GOBIN=" + filepath.Join(dir, "bin")}
	fetch := func(args ...string) {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), goEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("go %v failed in CI: %v\n%s", args, err, out)
			}
			t.Skipf("go %v failed (offline?): %v\n%s", args, err, out)
		}
	}
	// The pinned generator (docs/design/dependencies.md), installed in the
	// temporary folder; then what the generated code imports.
	fetch("install", "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2")
	fetch("mod", "download")

	runTool(t, ctx, dir, nil, filepath.Join(dir, "bin", "oapi-codegen"), "-config", "oapi-codegen.yaml", doc)
	program = filepath.Join(dir, "bin", "client")
	runTool(t, ctx, dir, goEnv, "go", "build", "-o", program, ".")
	return program
}

// signingCode is sign.go for the program: the Go code of docs/signing.md,
// "Code" (the first go block under "### Go (standard library)"), so that
// the program signs exactly as merchants are told to, and the page's code
// is proven to sign requests the server accepts.
func signingCode(t *testing.T) string {
	t.Helper()
	page, err := os.ReadFile(signingPage)
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(page), "\n### Go (standard library)\n")
	require.True(t, ok, "docs/signing.md has no section \"Go (standard library)\"")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "docs/signing.md, \"Go (standard library)\": no go code block")
	code, _, ok := strings.Cut(block, "\n```")
	require.True(t, ok, "docs/signing.md, \"Go (standard library)\": the go code block does not end")
	return "// Taken from docs/signing.md, \"Go (standard library)\", by TestOapiCodegenClient.\n\npackage main\n\n" + code + "\n"
}
