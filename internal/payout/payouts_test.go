package payout_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

// TestCreateRefusals: what createPayout refuses, as the fault code and
// field of docs/design/decisions.md section 3, and that a refused payout
// leaves nothing: no payout, no event, no operation, no reservation of the
// payout allowance (docs/design/decisions.md section 12).
func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			withoutDebit := sandbox.NewAdapter("http://127.0.0.1:1", "unused", nil)
			withoutDebit.Profiles["default"] = slices.DeleteFunc(withoutDebit.Profiles["default"],
				func(c provider.Capability) bool { return c == provider.Debit })
			for _, tc := range []struct {
				name  string
				edit  func(n *payout.New, k *merchant.Key, svc **payout.Service)
				code  fault.Code
				field string
			}{
				{"raw card data without the key's permission", func(_ *payout.New, k *merchant.Key, _ **payout.Service) {
					k.DirectCardData = false
				}, fault.DirectCardDataNotAllowed, "payout_method.card"},
				{"an unknown currency", func(n *payout.New, _ *merchant.Key, _ **payout.Service) { n.Currency = "XYZ" },
					fault.ValidationError, "currency"},
				{"an unassigned billing country", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Customer.BillingAddress.Country = "ZZ"
				}, fault.ValidationError, "customer.billing_address.country"},
				{"a card and a saved card", func(n *payout.New, _ *merchant.Key, _ **payout.Service) { n.SavedCardID = "sc_1" },
					fault.CardAndSavedCardExclusive, "payout_method"},
				{"a wallet payload on a card payout", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Wallet = json.RawMessage(`{"token":"sandbox_success"}`)
				}, fault.ValidationError, "payout_method.wallet"},
				{"a card payout without a card", func(n *payout.New, _ *merchant.Key, _ **payout.Service) { n.Card = nil },
					fault.ValidationError, "payout_method.card"},
				{"a number failing Luhn", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Card.Number = "4242424242424241"
				}, fault.ValidationError, "payout_method.card.number"},
				{"a CVV that is not digits", func(n *payout.New, _ *merchant.Key, _ **payout.Service) { n.Card.CVV = "12a" },
					fault.ValidationError, "payout_method.card.cvv"},
				{"an expired card", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Card.ExpYear = r.Clock.Now().Year() - 1
				}, fault.ValidationError, "payout_method.card.expire_year"},
				{"an expiry more than 50 years ahead", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Card.ExpYear = r.Clock.Now().Year() + 51
				}, fault.ValidationError, "payout_method.card.expire_year"},
				{"a Visa card without the payee's name", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Customer.FirstName = ""
				}, fault.ValidationError, "customer.first_name"},
				{"a card on a wallet payout", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Method = payout.MethodApplePay
				}, fault.ValidationError, "payout_method.card"},
				{"a saved card on a wallet payout", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Method, n.Card, n.SavedCardID = payout.MethodApplePay, nil, "sc_1"
				}, fault.ValidationError, "payout_method.saved_card_id"},
				{"a wallet payout without its payload", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Method, n.Card = payout.MethodGooglePay, nil
				}, fault.ValidationError, "payout_method.wallet"},
				{"a return URL that is not http(s)", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.ReturnURL = "ftp://shop.example/back"
				}, fault.ValidationError, "return_url"},
				{"no channel of the key takes the currency", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Currency = "CHF"
				}, fault.ChannelNotAvailable, "payout_method.type"},
				{"a profile that cannot pay out", func(_ *payout.New, _ *merchant.Key, svc **payout.Service) {
					*svc = payout.NewService(r.Keyring, r.Clock.Now, uuid.NewString, provider.Registry{sandbox.Name: withoutDebit}, nil,
						r.Store, store.ErrNotFound, r.svc.Render)
				}, fault.CapabilityNotSupported, ""},
				{"a saved card the key does not have", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.Card, n.SavedCardID = nil, "sc_unknown"
				}, fault.SavedCardNotFound, "saved_card_id"},
				{"over the day's payout allowance", func(n *payout.New, _ *merchant.Key, _ **payout.Service) {
					n.AmountMinor = 10_001
				}, fault.LimitExceeded, ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					k, in, svc := r.key(10_000), r.toCard("4242424242424242"), r.svc
					tc.edit(&in, &k, &svc)
					err := r.Store.InTx(r.Ctx, func(tx *store.Tx) error {
						_, err := svc.Create(r.Ctx, tx, k, in)
						return err
					})
					f := faultOf(t, err)
					require.Equal(t, tc.code, f.Code, f.Message)
					require.Equal(t, tc.field, f.Field)

					evs, err := r.Store.ListEvents(r.Ctx, k.ID, webhook.EventFilter{Limit: 10})
					require.NoError(t, err)
					require.Empty(t, evs, "no payout.processing: no payout")
					require.Zero(t, r.usage(k).ReservedMinor, "nothing reserved")
				})
			}
		})
	}
}

// TestCreate: an accepted payout is processing, its first event recorded
// with it; the transfer is one operation queued in the same transaction,
// the card only in its sealed secret (docs/design/decisions.md section 8),
// never in the payout; the allowance holds the amount.
func TestCreate(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			k := r.key(10_000)
			const number = "4242424242424242"
			p := r.accepted(k, r.toCard(number))
			require.Equal(t, payout.Processing, p.Status)
			require.Equal(t, "424242******4242", p.CardMask)

			stored := r.payout(p.ID)
			require.Equal(t, payout.Processing, stored.Status)
			require.Equal(t, k.ID, stored.AccessKeyID)
			require.Equal(t, "424242******4242", stored.CardMask)
			require.NotContains(t, fmt.Sprintf("%+v", *stored), number[4:], "no card number in the payout")
			require.Equal(t, []string{"payout.processing"}, r.Events(k, p.ID))
			require.Equal(t, allowance.Usage{ReservedMinor: 2500}, r.usage(k))

			ops := storetest.OpenOperations(t, r.Store, p.ID)
			require.Len(t, ops, 1, "one transfer queued")
			op, err := r.Store.FindOperation(r.Ctx, ops[0])
			require.NoError(t, err)
			require.Equal(t, payout.Resource, op.Resource)
			require.Equal(t, payout.OpCreate, op.Kind)
			sealed, err := r.Store.OperationSecret(r.Ctx, op.ID)
			require.NoError(t, err)
			require.NotContains(t, string(sealed), number, "the card is sealed")
			require.NotContains(t, string(sealed), number[6:], "the card is sealed")
		})
	}
}

// TestOutcomes: the provider's answer to the transfer becomes the payout's
// status, recorded with its event; the reservation is settled by the
// outcome (docs/design/decisions.md section 12): succeeded consumes it,
// declined and failed release it, and it stands while the payout waits
// for its payee. The operation's secret is gone once answered.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			for _, tc := range []struct {
				number    string
				status    payout.Status
				decline   string
				transfers int
				usage     allowance.Usage
			}{
				{"4242424242424242", payout.Succeeded, "", 1, allowance.Usage{UsedMinor: 2500}},
				{"4000000000000002", payout.Declined, "card_declined", 0, allowance.Usage{}},
				{"4000000000009995", payout.Declined, "insufficient_funds", 0, allowance.Usage{}},
				{"4000000000000119", payout.Failed, "processing_error", 0, allowance.Usage{}},
				{"4000000000003220", payout.RequiresAction, "", 0, allowance.Usage{ReservedMinor: 2500}},
			} {
				t.Run(string(tc.status)+" "+tc.number, func(t *testing.T) {
					k := r.key(10_000)
					p := r.accepted(k, r.toCard(tc.number))
					ops := r.Run(p.ID)
					got := r.payout(p.ID)
					require.Equal(t, tc.status, got.Status)
					require.Equal(t, tc.decline, got.DeclineCode)
					require.Equal(t, []string{"payout.processing", "payout." + string(tc.status)}, r.Events(k, p.ID))
					require.Equal(t, tc.usage, r.usage(k))
					require.Equal(t, tc.transfers, r.transfers(ops[0]))
					_, err := r.Store.OperationSecret(r.Ctx, ops[0])
					require.ErrorIs(t, err, store.ErrNotFound, "the secret is deleted once the provider answered")
					switch {
					case tc.decline != "":
						require.NotEmpty(t, got.ClientDescription)
					case tc.status == payout.Succeeded:
						require.NotNil(t, got.BankReference)
					case tc.status == payout.RequiresAction:
						require.Equal(t, "three_ds", got.NextActionType)
						require.NotNil(t, got.ActionExpiresAt)
						require.Equal(t, r.Clock.Now().Add(payout.ActionLifetime), *got.ActionExpiresAt)
					}
				})
			}
		})
	}
}

// TestDailyAllowance: the day's payout allowance counts what is reserved
// and what is consumed; over it a payout is refused and nothing is stored,
// and a decline gives its share back (docs/design/decisions.md section 12).
func TestDailyAllowance(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			k := r.key(5000)
			done := r.accepted(k, r.toCard("4242424242424242"))
			r.Run(done.ID)
			waiting := r.accepted(k, r.toCard("4000000000003220"))
			r.Run(waiting.ID)
			require.Equal(t, payout.RequiresAction, r.payout(waiting.ID).Status)
			require.Equal(t, allowance.Usage{UsedMinor: 2500, ReservedMinor: 2500}, r.usage(k))

			over := r.toCard("4242424242424242")
			over.AmountMinor = 1
			_, err := r.create(k, over)
			require.Equal(t, fault.LimitExceeded, faultOf(t, err).Code)
			require.Equal(t, allowance.Usage{UsedMinor: 2500, ReservedMinor: 2500}, r.usage(k))

			require.NoError(t, r.confirm(k, waiting.ID, "654321"), "a wrong code")
			r.Run(waiting.ID)
			require.Equal(t, payout.Declined, r.payout(waiting.ID).Status)
			require.Equal(t, allowance.Usage{UsedMinor: 2500}, r.usage(k), "released")
			r.accepted(k, over)
		})
	}
}

// TestDuplicateOrderID: a key's order_id names one payout (409
// duplicate_order_id); the refused one's reservation goes with its
// transaction; another key may use the same order_id.
func TestDuplicateOrderID(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			k, other := r.key(10_000), r.key(0)
			in := r.toCard("4242424242424242")
			first := r.accepted(k, in)
			_, err := r.create(k, in)
			f := faultOf(t, err)
			require.Equal(t, fault.DuplicateOrderID, f.Code)
			require.Equal(t, "order_id", f.Field)
			require.Equal(t, allowance.Usage{ReservedMinor: 2500}, r.usage(k), "the first payout's reservation only")
			require.Len(t, storetest.OpenOperations(t, r.Store, first.ID), 1)
			r.accepted(other, in)
		})
	}
}

// outcome is the answer of the provider that moves a payout to a status;
// Processing is the payee's confirm, ManualReview an unreadable answer.
var outcome = map[payout.Status]provider.PayoutResult{
	payout.RequiresAction: {Status: provider.StatusRequiresAction,
		NextAction: &provider.NextAction{Type: "three_ds", URL: "https://acs.example/3ds"}},
	payout.Succeeded: {Status: provider.StatusSucceeded},
	payout.Declined:  {Status: provider.StatusDeclined, DeclineCode: "card_declined"},
	payout.Failed:    {Status: provider.StatusFailed, DeclineCode: "processing_error"},
}

// TestMovesThroughSave: every move the exported API can ask of a payout
// in every status (a confirm, each answer of the provider, an unreadable
// answer) goes through its one save: a move in the life cycle
// (payout.CanMove, itself pinned by TestLifeCycle: docs/design/decisions.md
// section 15) is stored with its payout.<status> event and settles the
// allowance on an outcome; any other leaves the payout, its events and its
// reservation as they were.
func TestMovesThroughSave(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			for _, from := range payout.Statuses {
				for _, to := range payout.Statuses {
					t.Run(string(from)+" to "+string(to), func(t *testing.T) {
						k := r.key(10_000)
						p := r.payout(r.accepted(k, r.toCard("4242424242424242")).ID)
						// The payout is put in from behind the life cycle's back:
						// the store's write alone, no event, nothing settled.
						p.Status = from
						require.NoError(t, r.Store.UpdatePayout(r.Ctx, p))
						before := r.Events(k, p.ID)

						op := &operation.Operation{ID: uuid.NewString(), Resource: payout.Resource, ResourceID: p.ID, Kind: payout.OpCreate}
						err := r.Store.InTx(r.Ctx, func(tx *store.Tx) error {
							switch to {
							case payout.Processing:
								p, err := tx.LockPayoutForKey(r.Ctx, k.ID, p.ID)
								if err != nil {
									return err
								}
								_, err = r.svc.Confirm(r.Ctx, tx, p, "123456")
								return err
							case payout.ManualReview:
								return r.handler.Unreadable(r.Ctx, tx, op)
							}
							return r.handler.Apply(r.Ctx, tx, op, payout.Outcome{PayoutResult: outcome[to]})
						})

						got := r.payout(p.ID)
						if !payout.CanMove(from, to) {
							if to == payout.Processing {
								require.Equal(t, fault.InvalidPayoutState, faultOf(t, err).Code)
							} else {
								require.NoError(t, err, "an answer the life cycle refuses is not applied")
							}
							require.Equal(t, from, got.Status)
							require.Equal(t, before, r.Events(k, p.ID), "no event")
							require.Equal(t, allowance.Usage{ReservedMinor: 2500}, r.usage(k), "the reservation stands")
							return
						}
						require.NoError(t, err)
						require.Equal(t, to, got.Status)
						require.Equal(t, append(before, "payout."+string(to)), r.Events(k, p.ID))
						want := allowance.Usage{ReservedMinor: 2500}
						switch to {
						case payout.Succeeded:
							want = allowance.Usage{UsedMinor: 2500}
						case payout.Declined, payout.Failed:
							want = allowance.Usage{}
						}
						require.Equal(t, want, r.usage(k))
					})
				}
			}
		})
	}
}

// TestConfirm: a confirm moves a payout waiting for its payee to
// processing and queues the code for the provider, sealed in the
// operation's secret only; the provider's answer ends it
// (docs/sandbox.md: 123456 is the right code). A payout not waiting is
// refused with invalid_payout_state.
func TestConfirm(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			for _, tc := range []struct {
				code    string
				status  payout.Status
				decline string
			}{
				{"123456", payout.Succeeded, ""},
				{"654321", payout.Declined, "authentication_failed"},
			} {
				t.Run(tc.code, func(t *testing.T) {
					k := r.key(0)
					p := r.accepted(k, r.toCard("4000000000003220"))
					r.Run(p.ID)
					require.NoError(t, r.confirm(k, p.ID, tc.code))
					got := r.payout(p.ID)
					require.Equal(t, payout.Processing, got.Status)
					ops := storetest.OpenOperations(t, r.Store, p.ID)
					require.Len(t, ops, 1)
					sealed, err := r.Store.OperationSecret(r.Ctx, ops[0])
					require.NoError(t, err)
					require.NotContains(t, string(sealed), tc.code, "the code is sealed")
					require.Equal(t, fault.InvalidPayoutState, faultOf(t, r.confirm(k, p.ID, tc.code)).Code,
						"processing: not waiting")

					r.Run(p.ID)
					got = r.payout(p.ID)
					require.Equal(t, tc.status, got.Status)
					require.Equal(t, tc.decline, got.DeclineCode)
					require.Equal(t, []string{"payout.processing", "payout.requires_action", "payout.processing",
						"payout." + string(tc.status)}, r.Events(k, p.ID))
					require.Equal(t, fault.InvalidPayoutState, faultOf(t, r.confirm(k, p.ID, tc.code)).Code, "final")
				})
			}
		})
	}
}

// TestLostCompareAndSet: a payout changed since it was read is not
// overwritten: the save of the stale copy answers payout.ErrConflict, the
// payout's own conflict (409 invalid_payout_state, retryable), and its
// transaction leaves nothing.
func TestLostCompareAndSet(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			k := r.key(0)
			p := r.accepted(k, r.toCard("4000000000003220"))
			r.Run(p.ID)
			stale := r.payout(p.ID)
			require.Equal(t, payout.RequiresAction, stale.Status)
			require.NoError(t, r.confirm(k, p.ID, "123456"))

			err := r.Store.InTx(r.Ctx, func(tx *store.Tx) error {
				_, err := r.svc.Confirm(r.Ctx, tx, stale, "654321")
				return err
			})
			require.ErrorIs(t, err, payout.ErrConflict)
			f, ok := fault.ConflictAnswer(err)
			require.True(t, ok)
			require.Equal(t, fault.InvalidPayoutState, f.Code)
			require.True(t, f.Retryable)

			require.Len(t, storetest.OpenOperations(t, r.Store, p.ID), 1, "the winner's confirm only")
			require.Equal(t, []string{"payout.processing", "payout.requires_action", "payout.processing"}, r.Events(k, p.ID))
			r.Run(p.ID)
			require.Equal(t, payout.Succeeded, r.payout(p.ID).Status, "the winner's code was sent")
		})
	}
}

// TestActionExpiry: the expiry job of a payout waiting for its payee
// snoozes until ActionExpiresAt; then the provider is asked once more: a
// final answer is recorded, still waiting the payout fails with
// authentication_expired (docs/design/decisions.md section 15), and its
// reservation is settled as the outcome says.
func TestActionExpiry(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			for _, tc := range []struct {
				name    string
				page    string // what the payee did on the 3DS page meanwhile; "": nothing
				status  payout.Status
				decline string
				usage   allowance.Usage
			}{
				{"still waiting", "", payout.Failed, "authentication_expired", allowance.Usage{}},
				{"approved meanwhile", "approve", payout.Succeeded, "", allowance.Usage{UsedMinor: 2500}},
				{"denied meanwhile", "deny", payout.Declined, "authentication_failed", allowance.Usage{}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					k := r.key(10_000)
					p := r.accepted(k, r.toCard("4000000000003220"))
					ops := r.Run(p.ID)
					waiting := r.payout(p.ID)
					require.Equal(t, payout.RequiresAction, waiting.Status)
					if tc.page != "" {
						challenge(t, waiting.NextActionURL, tc.page)
					}
					job := &clock.ExpiryWorker[payout.ExpireActionArgs]{Expire: r.engine.ExpireJob}
					args := payout.ExpireActionArgs{PayoutID: p.ID, OperationID: ops[0]}

					r.Clock.Add(payout.ActionLifetime - time.Minute)
					wait, snoozed := snooze(job.Work(r.Ctx, jobOf(args)))
					require.True(t, snoozed, "before its deadline the job waits")
					require.Equal(t, time.Minute+time.Second, wait)
					require.Equal(t, payout.RequiresAction, r.payout(p.ID).Status)

					r.Clock.Add(time.Minute)
					require.NoError(t, job.Work(r.Ctx, jobOf(args)))
					got := r.payout(p.ID)
					require.Equal(t, tc.status, got.Status)
					require.Equal(t, tc.decline, got.DeclineCode)
					require.Equal(t, tc.usage, r.usage(k))
					require.Equal(t, "payout."+string(tc.status), r.Events(k, p.ID)[2])

					require.NoError(t, job.Work(r.Ctx, jobOf(args)), "a second run finds nothing to do")
					require.Len(t, r.Events(k, p.ID), 3)
				})
			}
		})
	}
}

// challenge completes the sandbox's 3DS page with outcome (approve, deny).
func challenge(t *testing.T, pageURL, outcome string) {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(pageURL, url.Values{"outcome": {outcome}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 400)
}

func jobOf(args payout.ExpireActionArgs) *river.Job[payout.ExpireActionArgs] {
	return &river.Job[payout.ExpireActionArgs]{JobRow: &rivertype.JobRow{}, Args: args}
}

// snooze reads a worker's answer: how long it asked to wait, if it did.
func snooze(err error) (time.Duration, bool) {
	var s *rivertype.JobSnoozeError
	if errors.As(err, &s) {
		return s.Duration, true
	}
	return 0, false
}
