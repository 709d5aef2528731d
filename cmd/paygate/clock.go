package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// clockRereadEvery is how often a fileClock looks at its file again: often
// enough that a test moving time waits a few polls at most, seldom enough
// to cost nothing beside the work that reads the clock.
const clockRereadEvery = 50 * time.Millisecond

// fileClock is the sandbox-only test hook PAYGATE_CLOCK_FILE: real time
// plus an offset read from a file, so that a test can make a running
// process live through a day (webhook retries, expiries) in seconds. The
// file holds a Go duration ("26h30m"); a missing or empty file is no
// offset. Time only moves forward: an offset smaller than one already seen
// is ignored, and so is a file that cannot be read or parsed once the
// process runs (the last good offset stays).
//
// The same clock is the app's now and River's time generator, so that the
// API, the domain services and the job queue's schedule all agree.
type fileClock struct {
	path string

	mu     sync.Mutex
	offset time.Duration
	readAt time.Time // real time of the last look at the file
}

// The hook feeds River's clock too (jobs.Options.Time).
var _ rivertype.TimeGenerator = (*fileClock)(nil)

// newFileClock reads the file once; unlike later reads, a malformed file
// is an error here, so that a mistyped offset stops the start.
func newFileClock(path string) (*fileClock, error) {
	off, err := readClockOffset(path)
	if err != nil {
		return nil, fmt.Errorf("PAYGATE_CLOCK_FILE: %w", err)
	}
	return &fileClock{path: path, offset: off, readAt: time.Now()}, nil
}

// Now is real time plus the file's offset.
func (c *fileClock) Now() time.Time {
	real := time.Now()
	c.mu.Lock()
	if real.Sub(c.readAt) >= clockRereadEvery {
		c.readAt = real
		if off, err := readClockOffset(c.path); err == nil && off > c.offset {
			c.offset = off
		}
	}
	off := c.offset
	c.mu.Unlock()
	return real.Add(off)
}

// NowUTC implements rivertype.TimeGenerator.
func (c *fileClock) NowUTC() time.Time { return c.Now().UTC() }

// NowUTCOrNil implements rivertype.TimeGenerator: never nil, so that River
// uses this clock in its queries instead of the database's.
func (c *fileClock) NowUTCOrNil() *time.Time {
	t := c.NowUTC()
	return &t
}

func readClockOffset(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, nil
	}
	off, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s holds %q, not a duration such as 26h30m", path, s)
	}
	if off < 0 {
		return 0, fmt.Errorf("%s holds a negative offset: time only moves forward", path)
	}
	return off, nil
}
