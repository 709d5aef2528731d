package stripe

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	sdk "github.com/stripe/stripe-go/v85"

	"github.com/paygate/paygate/internal/provider"
)

// TestMovementOf: the cases the fake does not make: a transaction
// settled in another currency is compared in the charge's or refund's
// own; types that are not payment money, and a source Stripe did not
// expand, are no movement.
func TestMovementOf(t *testing.T) {
	read := func(body string) *sdk.BalanceTransaction {
		var bt sdk.BalanceTransaction
		require.NoError(t, json.Unmarshal([]byte(body), &bt))
		return &bt
	}
	m, ok := movement(read(`{"id":"txn_1","object":"balance_transaction","type":"charge","amount":1085,"currency":"usd",
		"exchange_rate":1.085,"fee":61,"created":1768478400,"source":{"id":"ch_1","object":"charge","amount":1000,
		"amount_captured":1000,"currency":"eur","metadata":{"paygate_operation_id":"op_pay"},
		"payment_intent":{"id":"pi_1","object":"payment_intent","capture_method":"automatic","metadata":{"paygate_operation_id":"op_pay"}}}}`))
	require.True(t, ok)
	require.Equal(t, provider.Movement{Kind: provider.MoveCharge, OperationID: "op_pay", Ref: "txn_1", PaymentRef: "pi_1",
		AmountMinor: 1000, Currency: "EUR", FeeMinor: 61, At: m.At}, m)

	m, ok = movement(read(`{"id":"txn_2","object":"balance_transaction","type":"refund","amount":-543,"currency":"usd",
		"exchange_rate":1.086,"fee":0,"created":1768478400,"source":{"id":"re_1","object":"refund","amount":500,"currency":"eur",
		"metadata":{"paygate_operation_id":"op_refund"},"payment_intent":"pi_1","charge":"ch_1"}}`))
	require.True(t, ok)
	require.Equal(t, provider.Movement{Kind: provider.MoveRefund, OperationID: "op_refund", Ref: "txn_2", PaymentRef: "pi_1",
		AmountMinor: 500, Currency: "EUR", At: m.At}, m)

	m, ok = movement(read(`{"id":"txn_3","object":"balance_transaction","type":"charge","amount":700,"currency":"usd","fee":50,
		"created":1768478400,"source":{"id":"ch_3","object":"charge","amount":700,"amount_captured":700,"currency":"usd",
		"metadata":{},"payment_intent":null}}`))
	require.True(t, ok, "a charge made without a PaymentIntent")
	require.Equal(t, provider.Movement{Kind: provider.MoveCharge, Ref: "txn_3", PaymentRef: "ch_3", AmountMinor: 700,
		Currency: "USD", FeeMinor: 50, At: m.At}, m)

	for _, body := range []string{
		`{"id":"txn_4","object":"balance_transaction","type":"payout","amount":-10000,"currency":"usd","created":1768478400,
			"source":{"id":"po_1","object":"payout"}}`,
		`{"id":"txn_5","object":"balance_transaction","type":"adjustment","amount":-1500,"currency":"usd","created":1768478400,
			"source":{"id":"du_1","object":"dispute"}}`,
		`{"id":"txn_6","object":"balance_transaction","type":"charge","amount":700,"currency":"usd","created":1768478400,"source":"ch_6"}`,
	} {
		_, ok := movement(read(body))
		require.False(t, ok, body)
	}
}
