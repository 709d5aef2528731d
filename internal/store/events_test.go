package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

type noopDeliver struct {
	river.WorkerDefaults[webhook.DeliverArgs]
}

func (noopDeliver) Work(context.Context, *river.Job[webhook.DeliverArgs]) error { return nil }

// TestPaymentEvents: a status change written by the payment domain records
// its payment.<status> event and fans it out (deliveries and their jobs)
// in the same transaction; a rolled back change leaves no event; a write
// that changes no status records none. (The store itself only writes SQL:
// the domain decides, payment/move.go.)
func TestPaymentEvents(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			workers := river.NewWorkers()
			river.AddWorker(workers, noopDeliver{})
			_, err := jobs.NewClient(s, workers, time.Now, jobs.Options{})
			require.NoError(t, err)
			svc := &payment.Service{NewID: uuid.NewString, Render: func(p *payment.Payment) ([]byte, error) {
				return json.Marshal(map[string]string{"payment_id": p.ID, "status": string(p.Status)})
			}}
			k, c := newKey(t, s, "ev"), newChannel(t, s, "ev", "USD")
			ep := newEndpoint(t, s, k.ID, t0)
			p := &payment.Payment{ID: uuid.NewString(), SessionID: uuid.NewString(), AccessKeyID: k.ID, ChannelID: c.ID,
				Kind: payment.KindHosted, Status: payment.Created, OrderID: "o", AmountMinor: 1, Currency: "USD",
				Locale: "ru", OperationMode: payment.ModeCharge, ExpiresAt: &t0, CreatedAt: t0, UpdatedAt: t0}
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.CreatePayment(ctx, p) }))

			boom := context.Canceled
			require.ErrorIs(t, s.InTx(ctx, func(tx *store.Tx) error {
				if _, err := svc.ExpireSession(ctx, tx, p.ID, t0.Add(time.Second)); err != nil {
					return err
				}
				return boom
			}), boom)
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				_, err := svc.ExpireSession(ctx, tx, p.ID, t0.Add(2*time.Second))
				return err
			}))
			p, err = s.FindPaymentByID(ctx, p.ID)
			require.NoError(t, err)
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
				p.MaskedCard = "same status: no event"
				return tx.UpdatePayment(ctx, p)
			}))

			evs, err := s.ListEvents(ctx, k.ID, webhook.EventFilter{Limit: 10})
			require.NoError(t, err)
			var types []string
			for _, e := range evs {
				types = append(types, e.Type)
				var body struct {
					ID   string `json:"id"`
					Type string `json:"type"`
					Data struct {
						Object map[string]string `json:"object"`
					} `json:"data"`
				}
				require.NoError(t, json.Unmarshal(e.Body, &body))
				require.Equal(t, e.ID, body.ID)
				require.Equal(t, "payment."+body.Data.Object["status"], body.Type, "the object is the payment at that change")
			}
			require.Equal(t, []string{"payment.expired"}, types, "nothing from the rolled back change or the same-status write")
			for _, e := range evs {
				ds, err := s.ListDeliveries(ctx, e.ID)
				require.NoError(t, err)
				require.Len(t, ds, 1, "fanned out as recorded: one delivery to the one endpoint")
				require.Equal(t, ep.ID, ds[0].EndpointID)
			}
			var deliverJobs int
			require.NoError(t, s.DB().QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = 'webhook.deliver'`).Scan(&deliverJobs))
			require.Equal(t, 1, deliverJobs, "one deliver job per event, none from the rolled back change")
		})
	}
}

// TestDeliverJobsUnique: a second deliver job for the same delivery and
// generation is skipped while the first is waiting (the sweep relies on
// it), and a job of the next generation is not.
func TestDeliverJobsUnique(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			workers := river.NewWorkers()
			river.AddWorker(workers, noopDeliver{})
			_, err := jobs.NewClient(s, workers, time.Now, jobs.Options{})
			require.NoError(t, err)
			for _, args := range []webhook.DeliverArgs{{DeliveryID: "d1"}, {DeliveryID: "d1"}, {DeliveryID: "d1", Generation: 1}} {
				require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.Enqueue(ctx, args, nil) }))
			}
			var n int
			require.NoError(t, s.DB().QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = 'webhook.deliver'`).Scan(&n))
			require.Equal(t, 2, n)
		})
	}
}
