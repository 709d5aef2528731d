package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
)

// exportMemory is the check export-memory: exportPayments (GET
// /cabinet/v1/payments/export) streams with bounded memory
// (docs/design/decisions.md section 13). It stores payments straight into a
// running Paygate's database, exports them over HTTP (signed, read as a
// stream, rows counted), and samples the server process's resident memory
// and Go heap in use while it does: first with a tenth of the payments,
// then with all of them (100,000 by default). It passes when every row is
// exported, in order, and the server's peak over its idle level grows by
// less than 16 MiB between the two sizes, ten times apart: memory does not
// follow the number of rows. It prints rows per second and MB per second.
func exportMemory(ctx context.Context, c checkConfig) (checkResult, error) {
	res := checkResult{name: "export-memory", pass: true}
	total := c.n
	if total == 0 {
		total = 100000
	}
	small := total / 10
	p, err := startChecked(ctx, c, "export", paygateSpec{})
	if err != nil {
		return res, err
	}
	defer p.close()
	st, err := store.Open(ctx, store.Config{DatabaseURL: p.spec.databaseURL, SQLitePath: p.sqlitePath()})
	if err != nil {
		return res, err
	}
	defer st.Close()
	key, err := st.FindKeyByAccessKey(ctx, p.access)
	if err != nil {
		return res, err
	}
	chs, err := st.ChannelsForKey(ctx, key.ID)
	if err != nil || len(chs) == 0 {
		return res, fmt.Errorf("the key's channels: %v", err)
	}
	seeded := 0
	seed := func(upto int) error {
		start := time.Now()
		base := time.Now().UTC().Add(-24 * time.Hour)
		for seeded < upto {
			n := min(5000, upto-seeded)
			err := st.InTx(ctx, func(tx *store.Tx) error {
				for i := range n {
					k := seeded + i
					status := payment.Statuses[k%len(payment.Statuses)]
					p := &payment.Payment{ID: uuid.Must(uuid.NewV7()).String(), AccessKeyID: key.ID, ChannelID: chs[0].ID,
						Kind: payment.KindDirect, Status: status, OrderID: fmt.Sprintf("order-%07d", k), AmountMinor: int64(100 + k%9900),
						Currency: "USD", Description: fmt.Sprintf("Order %d, two items", k), CustomerReference: fmt.Sprintf("cust-%d", k%1000),
						Locale: "en", OperationMode: payment.ModeCharge, Method: "card", MaskedCard: "424242******4242",
						CardScheme: "visa", CreatedAt: base.Add(time.Duration(k) * time.Millisecond), UpdatedAt: base}
					if err := tx.CreatePayment(ctx, p); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			seeded += n
		}
		fmt.Fprintf(c.log, "export-memory: %d payments stored (%s)\n", seeded, time.Since(start).Round(time.Millisecond))
		return nil
	}
	pid := p.cmd.Process.Pid
	measure := func(label string, want int) (exportRun, error) {
		idle, err := sampleMemory(ctx, p.url, pid)
		if err != nil {
			return exportRun{}, err
		}
		run, err := exportOnce(ctx, p, pid, want)
		if err != nil {
			return run, err
		}
		run.idle = idle
		res.add(label+" rows", "%d (%s, %.0f rows/s, %.1f MB/s, %.1f MB of CSV)", run.rows,
			run.took.Round(time.Millisecond), float64(run.rows)/run.took.Seconds(),
			float64(run.bytes)/1e6/run.took.Seconds(), float64(run.bytes)/1e6)
		res.add(label+" server RSS", "idle %s, peak %s (+%s)", mib(idle.rss), mib(run.peak.rss), mib(run.peak.rss-idle.rss))
		res.add(label+" server heap in use", "idle %s, peak %s (+%s)", mib(idle.heap), mib(run.peak.heap), mib(run.peak.heap-idle.heap))
		if run.rows != want {
			res.fail("%s: %d rows exported, %d stored", label, run.rows, want)
		}
		if !run.ordered {
			res.fail("%s: rows not newest first", label)
		}
		return run, nil
	}
	if err := seed(small); err != nil {
		return res, err
	}
	a, err := measure(strconv.Itoa(small), small)
	if err != nil {
		return res, err
	}
	if err := seed(total); err != nil {
		return res, err
	}
	b, err := measure(strconv.Itoa(total), total)
	if err != nil {
		return res, err
	}
	growRSS := (b.peak.rss - b.idle.rss) - (a.peak.rss - a.idle.rss)
	growHeap := (b.peak.heap - b.idle.heap) - (a.peak.heap - a.idle.heap)
	res.add("growth 10x rows", "RSS %s, heap in use %s", mib(growRSS), mib(growHeap))
	const bound = 16 << 20
	if growRSS > bound || growHeap > bound {
		res.fail("memory grew with the rows: RSS %s, heap %s over the smaller export's (bound %s)",
			mib(growRSS), mib(growHeap), mib(bound))
	}
	return res, nil
}

type memSample struct{ rss, heap int64 }

type exportRun struct {
	rows         int
	bytes        int64
	took         time.Duration
	ordered      bool
	idle, peak   memSample
	sampledTimes int
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// exportOnce GETs the whole export as a stream, counting rows and checking
// the created_at order, while sampling the server's memory every 20 ms.
func exportOnce(ctx context.Context, p *checkedPaygate, pid, want int) (exportRun, error) {
	run := exportRun{ordered: true}
	req, err := http.NewRequestWithContext(ctx, "GET", p.url+"/cabinet/v1/payments/export", nil)
	if err != nil {
		return run, err
	}
	p.client.Sign(req, nil)
	done := make(chan struct{})
	var wg sync.WaitGroup
	var peak memSample
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if s, err := sampleMemory(ctx, p.url, pid); err == nil {
				peak.rss, peak.heap = max(peak.rss, s.rss), max(peak.heap, s.heap)
				run.sampledTimes++
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		close(done)
		wg.Wait()
		return run, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		close(done)
		wg.Wait()
		return run, fmt.Errorf("export: %d %s", resp.StatusCode, b)
	}
	counter := &countingReader{r: resp.Body}
	sc := bufio.NewScanner(counter)
	header, last := true, ""
	for sc.Scan() {
		if header {
			header = false
			continue
		}
		// The seeded rows hold no quoted line breaks: a line is a row.
		cells := strings.SplitN(sc.Text(), ",", 3)
		if len(cells) > 1 {
			if last != "" && cells[1] > last {
				run.ordered = false
			}
			last = cells[1]
		}
		run.rows++
	}
	run.took = time.Since(start)
	close(done)
	wg.Wait()
	run.bytes, run.peak = counter.n, peak
	return run, sc.Err()
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// sampleMemory reads the process's resident set (/proc, Linux) and the Go
// heap in use from its /metrics.
func sampleMemory(ctx context.Context, base string, pid int) (memSample, error) {
	var s memSample
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			s.rss = kb << 10
		}
	}
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			s.heap = int64(f)
		}
	}
	return s, sc.Err()
}
