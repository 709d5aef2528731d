package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestPaymentsUseTheBINBase: the active BIN version, not a built-in table,
// tells a card's scheme at payment time, and so which customer fields it
// needs. A version that calls 555555 a Visa BIN makes that Mastercard number
// need the Visa fields.
func TestPaymentsUseTheBINBase(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		body := fmt.Sprintf(`{"order_id":"bin","amount_minor":5,"currency":"USD","customer":{"email":"a@b.example"},
			"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":1,"expire_year":%d}}}`, time.Now().Year()+1)
		require.Equal(t, http.StatusCreated, e.post(e.a, "/api/v1/payments/direct", body).Status, "a Mastercard needs only the email")

		require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
			v, err := e.bins.Import(ctx, tx, cardinfo.ImportRequest{Label: "odd", Source: "odd.csv",
				CSV: strings.NewReader("bin,scheme\n555555,visa\n")})
			if err != nil {
				return err
			}
			_, err = e.bins.Activate(ctx, tx, v.ID)
			return err
		}))
		resp := e.post(e.a, "/api/v1/payments/direct", body)
		require.Equal(t, http.StatusBadRequest, resp.Status, string(resp.Body))
		require.Equal(t, "customer.first_name", *decodeError(t, resp.Body).Error.Field)
	})
}
