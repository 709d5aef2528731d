package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the SQLite scan reads the database with SQL
)

// pciSource is one body of text the canary scan reads.
type pciSource struct {
	name string
	text string
}

// acquirerState is the in-process sandbox acquirer's own file in the data
// folder. An acquirer keeps card data by design (it stands for the card
// networks' side), so its hits are shown, not counted against Paygate.
const acquirerState = "sandbox-acquirer.json"

// pciSources gathers everything the scan reads, the process being stopped:
// every table of the database (every row, every column, as text), River's
// job arguments on their own, the files of the data folder byte for byte
// (on SQLite the database with its free pages and WAL), the process's
// output, key A's answers and pages, the events as listed, and the
// webhooks as delivered.
func pciSources(ctx context.Context, pg *checkedPaygate, answers, events, webhooks string) ([]pciSource, error) {
	var db *sql.DB
	var err error
	if pg.spec.databaseURL != "" {
		db, err = sql.Open("pgx", pg.spec.databaseURL)
	} else {
		db, err = sql.Open("sqlite", "file:"+pg.sqlitePath()+"?mode=ro")
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tables, err := tableTexts(ctx, db, pg.spec.databaseURL != "")
	if err != nil {
		return nil, fmt.Errorf("read the database: %w", err)
	}
	var jobs strings.Builder
	rows, err := db.QueryContext(ctx, `SELECT kind, args FROM river_job`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var kind string
		var args []byte
		if err := rows.Scan(&kind, &args); err != nil {
			rows.Close()
			return nil, err
		}
		fmt.Fprintf(&jobs, "%s %s\n", kind, args)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sources := tables
	sources = append(sources, pciSource{"River job arguments", jobs.String()})
	files, err := filepath.Glob(filepath.Join(pg.spec.dataDir, "*"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		name := "file " + filepath.Base(f)
		if filepath.Base(f) == acquirerState {
			name = acquirerState
		}
		sources = append(sources, pciSource{name, string(b)})
	}
	return append(sources,
		pciSource{"process output", pg.out.String()},
		pciSource{"answers and pages", answers},
		pciSource{"events listed", events},
		pciSource{"webhooks delivered", webhooks},
	), nil
}

// tableTexts is every table's rows as text, one source per table.
func tableTexts(ctx context.Context, db *sql.DB, postgres bool) ([]pciSource, error) {
	list := `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	if postgres {
		list = `SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
	}
	rows, err := db.QueryContext(ctx, list)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []pciSource
	for _, t := range tables {
		text, err := tableText(ctx, db, t)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t, err)
		}
		out = append(out, pciSource{"table " + t, text})
	}
	return out, nil
}

// tableText reads every column of every row as text.
func tableText(ctx context.Context, db *sql.DB, table string) (string, error) {
	rows, err := db.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(table, `"`, `""`)+`"`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
			case []byte:
				b.Write(v)
			case string:
				b.WriteString(v)
			case time.Time:
				b.WriteString(v.Format(time.RFC3339Nano))
			default:
				fmt.Fprint(&b, v)
			}
			if i < len(vals)-1 {
				b.WriteByte('\t')
			}
		}
		b.WriteByte('\n')
	}
	return b.String(), rows.Err()
}

// canary is one value that must appear nowhere, in every spelling it
// could leak in.
type canary struct {
	name string
	re   *regexp.Regexp
}

// canaries: the card number plain, grouped with spaces or dashes, and its
// last 13 digits (a mask must hide all but the first six and the last
// four); the same for the Luhn-failing variant the API refused and for the
// challenged payout card; the CVV and
// codes as whole values (a short number can occur inside an id); the
// phone in its spellings; the wallet marker.
var canaries = func() []canary {
	var out []canary
	for _, number := range []string{canaryCard, canaryCard[:15] + "1", payout3DSCard} {
		grouped := number[:4] + "[ -]" + number[4:8] + "[ -]" + number[8:12] + "[ -]" + number[12:]
		out = append(out,
			canary{"card number " + number[:6] + "…", regexp.MustCompile(number + "|" + grouped)},
			canary{"card's last 13 digits " + number[len(number)-13:], regexp.MustCompile(number[len(number)-13:])})
	}
	whole := func(digits string) *regexp.Regexp {
		return regexp.MustCompile(`(^|[^0-9A-Za-z-])` + digits + `([^0-9A-Za-z-]|$)`)
	}
	digits := strings.TrimPrefix(canaryPhone, "+1")
	return append(out,
		canary{"CVV", whole(canaryCVV)},
		canary{"one-time code", whole(canaryOTP)},
		canary{"verification code", whole(canaryVerify)},
		canary{"payout one-time code", whole(canaryPayoutOTP)},
		canary{"phone number", regexp.MustCompile(digits + "|" + digits[:3] + "[ -.]" + digits[3:6] + "[ -.]" + digits[6:])},
		canary{"wallet payload", regexp.MustCompile(canaryWallet)},
	)
}()

// pciScan is what the scan found.
type pciScan struct {
	bytes    map[string]int // by kind of source
	hits     []string
	acquirer []string // hits in the acquirer's own state (shown, not failed)
	found    map[string]bool
	missing  []string
}

// pciControls must be found where named: they prove the scan reads what is
// stored, logged and sent in clear.
var pciControls = []struct{ where, what string }{
	{"table ", canaryMask},
	{"table ", "pci-payer"},
	{"River job arguments", "operation_id"},
	{"process output", `"route":"POST /api/v1/payments/direct"`},
	{"webhooks delivered", canaryMask},
	{"events listed", canaryMask},
	{"answers and pages", canaryMask},
}

func scanCanaries(sources []pciSource) pciScan {
	s := pciScan{bytes: map[string]int{}, found: map[string]bool{}}
	for _, src := range sources {
		kind := src.name
		if strings.HasPrefix(kind, "table ") {
			kind = "database"
		} else if strings.HasPrefix(kind, "file ") {
			kind = "data folder files"
		}
		s.bytes[kind] += len(src.text)
		for _, c := range canaries {
			if k := len(c.re.FindAllStringIndex(src.text, -1)); k > 0 {
				hit := fmt.Sprintf("%s in %s (%d)", c.name, src.name, k)
				if src.name == acquirerState {
					s.acquirer = append(s.acquirer, hit)
				} else {
					s.hits = append(s.hits, hit)
				}
			}
		}
		for _, ctl := range pciControls {
			if strings.HasPrefix(src.name, ctl.where) && strings.Contains(src.text, ctl.what) {
				s.found[ctl.where+ctl.what] = true
			}
		}
	}
	for _, ctl := range pciControls {
		if !s.found[ctl.where+ctl.what] {
			s.missing = append(s.missing, fmt.Sprintf("%q not found in %s", ctl.what, strings.TrimSpace(ctl.where)))
		}
	}
	return s
}

func (s pciScan) sizes() string {
	total := 0
	var parts []string
	for k, v := range s.bytes {
		total += v
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

func (s pciScan) controls() string {
	text := fmt.Sprintf("%d of %d found", len(pciControls)-len(s.missing), len(pciControls))
	if len(s.acquirer) > 0 {
		text += "; the acquirer's own state holds " + strings.Join(s.acquirer, ", ")
	}
	return text
}
