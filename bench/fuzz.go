package main

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// fuzzTarget is one func FuzzXxx(*testing.F) of the repository.
type fuzzTarget struct {
	name string
	pkg  string // ./internal/card
}

var (
	fuzzFuncRe  = regexp.MustCompile(`^func (Fuzz\w*)\(\s*\w+\s+\*testing\.F\s*\)`)
	fuzzExecsRe = regexp.MustCompile(`execs: (\d+)`)
	fuzzInputRe = regexp.MustCompile(`Failing input written to (\S+)`)
)

// fuzz runs every fuzz target of the repository's test files for
// c.duration each (30 s by default), one after the other on one worker
// (the machine is shared), and fails on any failure: a failing input
// (written by Go under the package's testdata/fuzz, where it becomes a
// regression test) or the engine's own error.
func fuzz(ctx context.Context, c checkConfig) (checkResult, error) {
	res := checkResult{name: "fuzz", pass: true}
	per := c.duration
	if per <= 0 {
		per = 30 * time.Second
	}
	root, err := repoRoot()
	if err != nil {
		return res, err
	}
	targets, err := findFuzzTargets(root)
	if err != nil {
		return res, err
	}
	if len(targets) == 0 {
		return res, fmt.Errorf("no fuzz targets under %s", root)
	}
	var names, execs []string
	var total int64
	failures := 0
	started := time.Now()
	flakes := 0
	for _, t := range targets {
		fmt.Fprintf(c.log, "fuzz: %s in %s for %s\n", t.name, t.pkg, per)
		var out []byte
		var runErr error
		// Go 1.26's fuzz coordinator may fail a run at the -fuzztime
		// boundary with a bare "context deadline exceeded" and no input
		// (go.dev/issue/75804, fixed in Go 1.27): such a run is counted
		// as a flake and run again, at most twice.
		for try := 0; try < 3; try++ {
			out, runErr = fuzzOnce(ctx, root, t, per)
			if runErr == nil || !deadlineFlake(out) {
				break
			}
			flakes++
			fmt.Fprintf(c.log, "fuzz: %s: the fuzz engine's deadline flake (go.dev/issue/75804), again\n", t.name)
		}
		names = append(names, t.name+" ("+strings.TrimPrefix(t.pkg, "./")+")")
		n := int64(-1)
		if m := fuzzExecsRe.FindAllSubmatch(out, -1); m != nil {
			n, _ = strconv.ParseInt(string(m[len(m)-1][1]), 10, 64)
			total += n
		}
		execs = append(execs, fmt.Sprintf("%s %s", t.name, execCount(n)))
		if runErr != nil {
			failures++
			if m := fuzzInputRe.FindSubmatch(out); m != nil {
				res.fail("%s found a failing input: %s (%s)", t.name, m[1], fuzzFailLine(out))
			} else {
				res.fail("%s: %v: %s", t.name, runErr, lastLines(out, 8))
			}
		}
	}
	res.add("targets", "%d: %s", len(targets), strings.Join(names, ", "))
	res.add("time", "%s each, one worker; %s in all, builds included", per, time.Since(started).Round(time.Second))
	res.add("execs", "%d (%s)", total, strings.Join(execs, ", "))
	res.add("failures", "%d", failures)
	res.add("engine flakes", "%d (runs repeated after Go's -fuzztime deadline race, go.dev/issue/75804)", flakes)
	return res, nil
}

// fuzzOnce runs one target for per; the build comes first.
func fuzzOnce(ctx context.Context, root string, t fuzzTarget, per time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, per+5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-fuzz", "^"+t.name+"$",
		"-fuzztime", per.String(), "-parallel", "1", t.pkg)
	cmd.Dir = root
	return cmd.CombinedOutput()
}

// deadlineFlake reports whether a failed run is the coordinator's
// deadline race: "context deadline exceeded", no failing input written, no
// panic and no failure of the target's own.
func deadlineFlake(out []byte) bool {
	s := string(out)
	return strings.Contains(s, "context deadline exceeded") && !fuzzInputRe.Match(out) &&
		!strings.Contains(s, "panic:") && !strings.Contains(s, "_test.go:")
}

func execCount(n int64) string {
	if n < 0 {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}

// findFuzzTargets reads every _test.go file under root (not testdata,
// vendor or hidden folders) for fuzz functions.
func findFuzzTargets(root string) ([]fuzzTarget, error) {
	var out []fuzzTarget
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if m := fuzzFuncRe.FindStringSubmatch(sc.Text()); m != nil {
				out = append(out, fuzzTarget{name: m[1], pkg: "./" + filepath.ToSlash(rel)})
			}
		}
		return sc.Err()
	})
	return out, err
}

// fuzzFailLine is the first line that says what failed.
func fuzzFailLine(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, ".go:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return lastLines(out, 3)
}

func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
