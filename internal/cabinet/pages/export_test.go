package pages_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// exportCall is what the page handed the CSV writer: the query, and the
// key clock the context carries.
type exportCall struct {
	q      pages.PaymentQuery
	clock  bool
	offset time.Duration
}

// exportTo stands in for the server's writer of the CSV
// (pages.Deps.Export, internal/server's exportPage, tested with its
// signed twin there): it records each call and answers as answer says.
type exportTo struct {
	mu     sync.Mutex
	calls  []exportCall
	answer func(w http.ResponseWriter) (bool, error)
}

func (x *exportTo) export(ctx context.Context, w http.ResponseWriter, q pages.PaymentQuery) (bool, error) {
	x.mu.Lock()
	x.calls = append(x.calls, exportCall{q: q, clock: clock.Known(ctx), offset: clock.Offset(ctx)})
	answer := x.answer
	x.mu.Unlock()
	return answer(w)
}

func (x *exportTo) last(t *testing.T) exportCall {
	t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	require.NotEmpty(t, x.calls)
	return x.calls[len(x.calls)-1]
}

// keys are the keys the download was asked for, in order.
func (x *exportTo) keys() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var keys []string
	for _, c := range x.calls {
		keys = append(keys, c.q.KeyID)
	}
	return keys
}

func (x *exportTo) answers(f func(w http.ResponseWriter) (bool, error)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.answer = f
}

func writeCSV(w http.ResponseWriter) (bool, error) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	_, err := w.Write([]byte("payment_id\n"))
	return true, err
}

// TestExportPage: the payments page's CSV download (docs/cabinet.md,
// "Payments" and "Exports and totals") covers the view's filters, read as
// the list reads them, over every page of it (no page bound), for the
// shown key at the key's clock; a viewer may download it; an error before
// the first byte is the error page, one after it aborts the connection
// so that no cut CSV looks whole; without a writer there is no download.
func TestExportPage(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		x := &exportTo{answer: writeCSV}
		e := newEnv(t, db, options{export: x.export})
		ctx := context.Background()
		viewer := e.signedIn(t, "ann@example.com", cabinet.Viewer, e.a, e.b)
		day := func(s string) *time.Time {
			d, err := time.Parse(time.DateOnly, s)
			require.NoError(t, err)
			return &d
		}

		for _, c := range []struct {
			name, query string
			want        pages.PaymentQuery
		}{
			{"every payment of the key shown", "", pages.PaymentQuery{KeyID: e.a.ID}},
			{"the view's filters, the to day included", "?key=" + e.b.ID +
				"&status=declined&from=2024-01-02&to=2024-01-03&q=+order-1+&after=1700000000000000_x",
				pages.PaymentQuery{KeyID: e.b.ID, Status: "declined", From: day("2024-01-02"), Before: day("2024-01-04"),
					Search: "order-1"}},
			{"filters not offered are left out", "?status=bogus&from=2024-13-01&to=soon&q=a%00b",
				pages.PaymentQuery{KeyID: e.a.ID}},
		} {
			t.Run(c.name, func(t *testing.T) {
				a := viewer.get("/cabinet/payments/export" + c.query)
				require.Equal(t, http.StatusOK, a.status, a.body)
				require.Equal(t, "text/csv; charset=utf-8", a.header.Get("Content-Type"))
				require.Equal(t, c.want, x.last(t).q)
			})
		}

		t.Run("at the key's clock", func(t *testing.T) {
			require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
				return tx.SetKeyClockOffset(ctx, e.b.ID, 36*time.Hour)
			}))
			viewer.get("/cabinet/payments/export?key=" + e.b.ID)
			require.Equal(t, exportCall{q: pages.PaymentQuery{KeyID: e.b.ID}, clock: true, offset: 36 * time.Hour}, x.last(t))
			viewer.get("/cabinet/payments/export?key=" + e.a.ID)
			require.Equal(t, exportCall{q: pages.PaymentQuery{KeyID: e.a.ID}, clock: true}, x.last(t), "key A's own clock")
		})

		t.Run("an error before the first byte is the error page", func(t *testing.T) {
			x.answers(func(http.ResponseWriter) (bool, error) { return false, errors.New("the database is away") })
			a := viewer.get("/cabinet/payments/export")
			require.Equal(t, http.StatusInternalServerError, a.status)
			require.Equal(t, "text/html; charset=utf-8", a.header.Get("Content-Type"))
			require.Contains(t, a.body, "Something went wrong")
			require.NotContains(t, a.body, "the database is away", "the cause stays in the log")
		})

		t.Run("an error after the first byte aborts the connection", func(t *testing.T) {
			x.answers(func(w http.ResponseWriter) (bool, error) {
				_, _ = writeCSV(w)
				return true, errors.New("the database went away")
			})
			r := httptest.NewRequest(http.MethodGet, "http://cabinet.test/cabinet/payments/export", nil)
			for _, c := range viewer.cookies {
				r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
			}
			w := httptest.NewRecorder()
			aborted := func() (p any) {
				defer func() { p = recover() }()
				e.mux.ServeHTTP(w, r)
				return nil
			}()
			require.Equal(t, http.ErrAbortHandler, aborted)
		})

		t.Run("without a writer there is no download", func(t *testing.T) {
			bare := newEnv(t, db, options{})
			a := bare.signedIn(t, "bob@example.com", cabinet.Admin, bare.a).get("/cabinet/payments/export")
			require.Equal(t, http.StatusNotFound, a.status)
			require.Contains(t, a.body, "These pages are not served here.")
		})
	})
}
