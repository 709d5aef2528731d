package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/client"
)

// headerList collects repeated -H flags.
type headerList []string

func (h *headerList) String() string     { return strings.Join(*h, ", ") }
func (h *headerList) Set(v string) error { *h = append(*h, v); return nil }

// call sends one signed request: paygate call METHOD PATH [-d JSON|@file].
// Keys come from PAYGATE_ACCESS_KEY / PAYGATE_SECRET, the server from
// PAYGATE_URL. The answer's body goes to stdout; the exit status is 0 only
// for a 2xx.
func call(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("call", stderr)
	data := fs.String("d", "", "request body: JSON, @FILE, or @- for standard input")
	var headers headerList
	fs.Var(&headers, "H", "extra header 'Name: value' (repeatable), e.g. an Idempotency-Key of your own")
	verbose := fs.Bool("v", false, "print the status line and headers to stderr")
	maxWait := fs.Duration("max-wait", 30*time.Second,
		"the longest a retry waits for a retryable answer's Retry-After; an answer asking for longer is printed, not waited for")
	// Flags may come before or after METHOD and PATH.
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		pos, rest = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if len(pos) != 2 {
		return usageError{"usage: paygate call METHOD PATH [-d JSON|@FILE] [-H 'Name: value']"}
	}
	base, ak, sk := envOr(getenv, "PAYGATE_URL", "http://127.0.0.1:8080"), getenv("PAYGATE_ACCESS_KEY"), getenv("PAYGATE_SECRET")
	if ak == "" || sk == "" {
		return usageError{"set PAYGATE_ACCESS_KEY and PAYGATE_SECRET (paygate serve prints them on first start)"}
	}
	body, err := readData(*data, stdin)
	if err != nil {
		return err
	}
	req := client.Request{Method: strings.ToUpper(pos[0]), Target: pos[1], Body: body, Header: http.Header{}}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return usageError{fmt.Sprintf("-H %q: want 'Name: value'", h)}
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if http.CanonicalHeaderKey(name) == "Idempotency-Key" {
			req.IdempotencyKey = value
			continue
		}
		req.Header.Add(name, value)
	}
	if *maxWait <= 0 {
		return usageError{"--max-wait must be positive"}
	}
	c := client.New(base, ak, sk)
	c.MaxRetryWait = *maxWait
	c.OnRetry = func(wait time.Duration, why string) {
		fmt.Fprintf(stderr, "paygate call: %s; trying again in %s\n", why, wait.Round(100*time.Millisecond))
	}
	resp, err := c.Do(ctx, req)
	if err != nil {
		return err
	}
	if after, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && resp.Status >= 400 &&
		time.Duration(after)*time.Second > *maxWait {
		fmt.Fprintf(stderr, "paygate call: the server asks to try again after %d s, more than --max-wait %s: not waited for\n",
			after, *maxWait)
	}
	if *verbose {
		fmt.Fprintf(stderr, "%d %s\n", resp.Status, http.StatusText(resp.Status))
		for k, v := range resp.Header {
			fmt.Fprintf(stderr, "%s: %s\n", k, strings.Join(v, ", "))
		}
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, resp.Body, "", "  ") == nil {
		pretty.WriteByte('\n')
		stdout.Write(bytes.TrimRight(pretty.Bytes(), "\n"))
		fmt.Fprintln(stdout)
	} else {
		stdout.Write(resp.Body)
	}
	if resp.Status < 200 || resp.Status > 299 {
		return fmt.Errorf("the server answered %d %s", resp.Status, http.StatusText(resp.Status))
	}
	return nil
}

func readData(d string, stdin io.Reader) ([]byte, error) {
	switch {
	case d == "":
		return nil, nil
	case d == "@-":
		return io.ReadAll(stdin)
	case strings.HasPrefix(d, "@"):
		return os.ReadFile(d[1:])
	}
	return []byte(d), nil
}
