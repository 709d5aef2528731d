package server

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
)

// filterParams are the filters of listPayments (GET /api/v1/payments),
// without its paging: the export is every page, the totals are over every
// page, so limit and cursor are unknown parameters (400 unknown_field).
var filterParams = []string{"status", "created_gte", "created_lt", "order_id", "customer_reference"}

// exportPage is how many payments the export reads per query.
const exportPage = 500

// exportWriteWindow is how long the export may take to write one page: the
// connection's write deadline moves on by it before each page, so a long
// export is not cut by the server's WriteTimeout while a stalled reader
// still is.
const exportWriteWindow = 60 * time.Second

// exportColumns are the export's columns, in order: what an accountant
// reconciles, never a card number nor anything sealed (docs/cabinet.md,
// "Exports and totals").
var exportColumns = []string{"payment_id", "created_at", "updated_at", "status", "amount_minor", "currency",
	"captured_amount_minor", "refunded_amount_minor", "order_id", "customer_reference", "description",
	"payment_method", "masked_card", "decline_code", "operation_mode", "subscription_id", "subscription_period",
	"subscription_attempt"}

// exportRow is a payment's row: the values of p as listPayments (GET
// /api/v1/payments) shows it at now.
func (s *Server) exportRow(p *payment.Payment, now time.Time, row []string) []string {
	v := s.paymentViewAt(p, now)
	var decline string
	if v.Decline != nil {
		decline = v.Decline.Code
	}
	var period, attempt string
	if v.SubscriptionPeriod != nil {
		period = strconv.FormatInt(*v.SubscriptionPeriod, 10)
	}
	if v.SubscriptionAttempt != nil {
		attempt = strconv.Itoa(*v.SubscriptionAttempt)
	}
	row = append(row[:0], v.PaymentID, csvTime(v.CreatedAt), csvTime(v.UpdatedAt), v.Status,
		strconv.FormatInt(v.AmountMinor, 10), v.Currency, strconv.FormatInt(deref(v.CapturedAmountMinor), 10),
		strconv.FormatInt(deref(v.RefundedAmountMinor), 10), v.OrderID, v.CustomerReference, v.Description,
		v.PaymentMethod, v.MaskedCard, decline, v.OperationMode, v.SubscriptionID, period, attempt)
	for i, cell := range row {
		row[i] = pages.CSVCell(cell)
	}
	return row
}

// csvTime is t as the API writes it: RFC 3339 in UTC, whole seconds.
func csvTime(t openapi.Time) string {
	return t.Std().UTC().Truncate(time.Second).Format(time.RFC3339)
}

// exportPayments is exportPayments (GET /cabinet/v1/payments/export;
// docs/design/decisions.md section 13): every payment of the key that
// listPayments (GET /api/v1/payments) would list with the same filters,
// all pages, newest first, as CSV, streamed a page of exportPage payments
// at a time, so memory does not grow with the number of payments. Signed,
// admitted and scoped like /api/v1. An error before the first byte is the
// JSON envelope; after it the status is sent, so the handler aborts the
// connection instead (the client sees a broken transfer, never a CSV that
// looks whole but is cut short).
func (s *Server) exportPayments() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.front(w, r)
		if !ok {
			return
		}
		if err := s.admit(r.Context(), s.store, c.key, c.nonce); err != nil {
			s.failErr(w, r, err)
			return
		}
		q, f := queryParams(r, filterParams)
		if f != nil {
			s.fail(w, r, f)
			return
		}
		filter, err := paymentFilter(q)
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		ctx := c.r.Context()
		err = s.streamPaymentsCSV(ctx, w, c.key.ID, filter, "payments.csv")
		switch {
		case err == nil:
		case !errors.Is(err, errStreamCut):
			s.failErr(w, r, err)
		default:
			// The status and part of the CSV are sent: abort the connection
			// so the client sees the transfer fail (docs/cabinet.md).
			s.log.Error("export aborted after streaming started", "request_id", requestID(ctx),
				"access_key", c.key.AccessKey, "error", err)
			panic(http.ErrAbortHandler)
		}
	})
}

// exportPage is the cabinet page's download (GET /cabinet/payments/export;
// pages.Deps.Export): every payment q selects, written as exportPayments
// writes them, at the key's clock the page puts in ctx.
func (s *Server) exportPage(ctx context.Context, w http.ResponseWriter, q pages.PaymentQuery) (started bool, err error) {
	f := payment.Filter{Status: q.Status, CreatedGTE: q.From, CreatedLT: q.Before, Search: q.Search}
	err = s.streamPaymentsCSV(ctx, w, q.KeyID, f, "payments.csv")
	return errors.Is(err, errStreamCut), err
}

// errStreamCut wraps an error met after the CSV's first byte was sent.
var errStreamCut = errors.New("the CSV stream was cut")

// streamPaymentsCSV writes the key's payments matching f as CSV, a page of
// exportPage payments at a time, each as the API shows it at the key's
// clock (ctx). An error before the first byte is returned as it is, and
// nothing was written; one after it wraps errStreamCut, and the caller
// must abort the connection.
func (s *Server) streamPaymentsCSV(ctx context.Context, w http.ResponseWriter, keyID string, f payment.Filter, filename string) error {
	now := s.keyNow(ctx)
	rc := http.NewResponseController(w)
	out := csv.NewWriter(w)
	started := false
	start := func() error {
		started = true
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="`+filename+`"`)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		return out.Write(exportColumns)
	}
	row := make([]string, 0, len(exportColumns))
	err := s.payments.EachPage(ctx, keyID, f, exportPage, func(page []*payment.Payment) error {
		_ = rc.SetWriteDeadline(time.Now().Add(exportWriteWindow)) // not every writer has a deadline
		if !started {
			if err := start(); err != nil {
				return err
			}
		}
		for _, p := range page {
			if err := out.Write(s.exportRow(p, now, row)); err != nil {
				return err
			}
		}
		out.Flush()
		if err := out.Error(); err != nil {
			return err
		}
		return rc.Flush()
	})
	if err == nil && !started {
		err = start() // no payment matches: the header row alone
	}
	if err == nil {
		out.Flush()
		err = out.Error()
	}
	if err != nil && started {
		return fmt.Errorf("%w: %w", errStreamCut, err)
	}
	return err
}

// paymentTotals is getPaymentTotals (GET /cabinet/v1/payments/totals;
// docs/design/decisions.md section 13): per currency, the totals of the
// payments the export with the same filters would list
// (payment.CurrencyTotals says what each counts).
func (s *Server) paymentTotals() http.Handler {
	return s.readQuery(filterParams, func(ctx context.Context, c *call) (answer, error) {
		f, err := paymentFilter(c.query)
		if err != nil {
			return answer{}, err
		}
		ts, err := s.payments.Totals(ctx, c.key.ID, f)
		if err != nil {
			return answer{}, err
		}
		out := openapi.PaymentTotals{Items: []openapi.CurrencyTotals{}}
		for _, t := range ts {
			out.Items = append(out.Items, openapi.CurrencyTotals{Currency: t.Currency, Count: t.Count,
				SucceededCount: t.SucceededCount, SucceededMinor: t.SucceededMinor, CapturedMinor: t.CapturedMinor,
				RefundedMinor: t.RefundedMinor, DeclinedCount: t.DeclinedCount})
		}
		return answer{http.StatusOK, out}, nil
	})
}
