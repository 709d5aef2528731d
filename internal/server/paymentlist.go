package server

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
)

// listPayments is the extension GET /api/v1/payments: the key's payments,
// newest first, a page at a time.
func (s *Server) listPayments() http.Handler {
	return s.readQuery(listParams, func(ctx context.Context, c *call) (answer, error) {
		f, err := paymentFilter(c.query)
		if err != nil {
			return answer{}, err
		}
		limit := f.Limit
		f.Limit++ // one more tells whether another page exists
		ps, err := s.payments.List(ctx, c.key.ID, f)
		if err != nil {
			return answer{}, err
		}
		out := openapi.PaymentList{Items: []openapi.Payment{}}
		if len(ps) > limit {
			last := ps[limit-1]
			cur := encodeCursor(last.CreatedAt, last.ID)
			out.NextCursor, ps = &cur, ps[:limit]
		}
		for _, p := range ps {
			out.Items = append(out.Items, s.paymentViewAt(p, s.keyNow(ctx)))
		}
		return answer{http.StatusOK, out}, nil
	})
}

var listParams = []string{"status", "created_gte", "created_lt", "order_id", "customer_reference", "limit", "cursor"}

// paymentFilter reads the query, which queryParams has checked.
func paymentFilter(q url.Values) (payment.Filter, error) {
	f := payment.Filter{Limit: 20}
	bad := func(name, msg string) error { return fault.OnField(fault.ValidationError, name, msg) }
	if v := q.Get("status"); v != "" {
		if !slices.Contains(payment.Statuses, payment.Status(v)) {
			return f, bad("status", "must be a payment status")
		}
		f.Status = v
	}
	for _, name := range []string{"created_gte", "created_lt"} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return f, bad(name, "must be an RFC 3339 date-time")
			}
			if name == "created_gte" {
				f.CreatedGTE = &t
			} else {
				f.CreatedLT = &t
			}
		}
	}
	if v := q.Get("order_id"); utf8.RuneCountInString(v) > 200 {
		return f, bad("order_id", "must be at most 200 characters")
	}
	if v := q.Get("customer_reference"); utf8.RuneCountInString(v) > 128 {
		return f, bad("customer_reference", "must be at most 128 characters")
	}
	f.OrderID, f.CustomerReference = q.Get("order_id"), q.Get("customer_reference")
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return f, bad("limit", "must be an integer from 1 to 100")
		}
		f.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		t, id, ok := decodeCursor(v)
		if !ok {
			return f, bad("cursor", "is not a cursor this API gave")
		}
		f.AfterCreated, f.AfterID = &t, id
	}
	return f, nil
}

func encodeCursor(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixMicro(), 10) + "." + id))
}

func decodeCursor(s string) (time.Time, string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", false
	}
	ts, id, ok := strings.Cut(string(b), ".")
	n, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || uuid.Validate(id) != nil {
		return time.Time{}, "", false
	}
	return time.UnixMicro(n).UTC(), id, true
}
