package pages

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/reconcile"
)

// The reconciliation pages' CSV of a day's breaks (docs/reconciliation.md,
// "In the cabinet").

// csvPage is how many breaks the CSV reads per query.
const csvPage = 500

// breakColumns are the CSV's columns: both sides of each break, never card
// data (neither side carries any).
var breakColumns = []string{"account", "day", "seq", "kind", "operation_id", "resource", "resource_id",
	"paygate_kind", "paygate_amount_minor", "paygate_currency", "paygate_at",
	"provider_kind", "provider_amount_minor", "provider_currency", "provider_at", "provider_ref"}

// ReconciliationCSV is GET /cabinet/reconciliation/{account}/{day}/breaks.csv:
// the shown key's breaks of a finished run, every page, as CSV, cells
// escaped as the payments export escapes them (CSVCell); an error after
// the first byte aborts the connection.
func (pg *Pages) ReconciliationCSV() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		v, d, ok := pg.reconciledDay(w, r, u, csrf)
		if !ok {
			return
		}
		if d.Status != "done" {
			pg.notFound(w, "The reconciliation of "+d.Account+" on "+d.Day+" has not finished.")
			return
		}
		started := false
		out := csv.NewWriter(w)
		err := func() error {
			for after := 0; ; {
				bs, err := pg.d.Reconciliation.Breaks(r.Context(), v.Key.ID, d.Account, d.Day, after, csvPage)
				if err != nil {
					return err
				}
				if !started {
					started = true
					h := w.Header()
					h.Set("Content-Type", "text/csv; charset=utf-8")
					h.Set("Content-Disposition", `attachment; filename="reconciliation-`+fileSafe(d.Account)+"-"+d.Day+`.csv"`)
					h.Set("Cache-Control", "no-store")
					h.Set("X-Content-Type-Options", "nosniff")
					w.WriteHeader(http.StatusOK)
					if err := out.Write(breakColumns); err != nil {
						return err
					}
				}
				for _, b := range bs {
					if err := out.Write(breakRecord(d, b)); err != nil {
						return err
					}
				}
				out.Flush()
				if err := out.Error(); err != nil || len(bs) < csvPage {
					return err
				}
				after = bs[len(bs)-1].Seq
			}
		}()
		switch {
		case err == nil:
		case !started:
			pg.fail(w, err)
		default:
			pg.log.Error("cabinet reconciliation CSV aborted after streaming started", "key", v.Key.ID, "error", err)
			panic(http.ErrAbortHandler)
		}
	})
}

// breakRecord is a break's CSV row.
func breakRecord(d *ReconciledDay, b Break) []string {
	resource := "payment"
	if b.Payout {
		resource = "payout"
	}
	if b.PaymentID == "" {
		resource = ""
	}
	side := func(s *reconcile.Side) []string {
		if s == nil {
			return []string{"", "", "", ""}
		}
		return []string{s.Kind, strconv.FormatInt(s.AmountMinor, 10), s.Currency,
			s.At.UTC().Truncate(time.Second).Format(time.RFC3339)}
	}
	ref := ""
	if b.Provider != nil {
		ref = b.Provider.Ref
	}
	row := append([]string{d.Account, d.Day, strconv.Itoa(b.Seq), b.Kind, b.Key, resource, b.PaymentID}, side(b.Paygate)...)
	row = append(append(row, side(b.Provider)...), ref)
	for i, c := range row {
		row[i] = CSVCell(c)
	}
	return row
}

// CSVCell escapes a cell a spreadsheet would run as a formula: one that
// starts with =, +, -, @, a tab or a carriage return is prefixed with '
// (docs/design/decisions.md section 13). The CSV quoting itself is
// encoding/csv's. The payments export (internal/server) escapes its cells
// with it too.
func CSVCell(v string) string {
	if v != "" {
		switch v[0] {
		case '=', '+', '-', '@', '\t', '\r':
			return "'" + v
		}
	}
	return v
}

// fileSafe is s with every byte but a letter, a digit, '.', '-' and '_'
// replaced by '_': a download's file name, kept out of the header's
// quoting.
func fileSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
