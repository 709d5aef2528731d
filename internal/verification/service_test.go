package verification_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/verification"
	"github.com/paygate/paygate/internal/webhook"
)

// TestCreateRefusals: what createCardVerification refuses, as the fault
// code and field of docs/design/decisions.md section 3, before any
// provider call, and that a refused verification leaves nothing: no
// verification, no event, no check of the card counted.
func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			noLookup := sandbox.NewAdapter("http://127.0.0.1:1", "unused", nil)
			noLookup.Profiles["default"] = slices.DeleteFunc(noLookup.Profiles["default"],
				func(c provider.Capability) bool { return c == provider.Lookup })
			for _, tc := range []struct {
				name  string
				edit  func(n *verification.New, k *merchant.Key, svc **verification.Service)
				code  fault.Code
				field string
			}{
				{"raw card data without the key's permission", func(_ *verification.New, k *merchant.Key, _ **verification.Service) {
					k.DirectCardData = false
				}, fault.DirectCardDataNotAllowed, "card"},
				{"a number failing Luhn", func(n *verification.New, _ *merchant.Key, _ **verification.Service) {
					n.Card.Number = "4242424242424241"
				}, fault.ValidationError, "card.number"},
				{"a CVV that is not digits", func(n *verification.New, _ *merchant.Key, _ **verification.Service) {
					n.Card.CVV = "12a"
				}, fault.ValidationError, "card.cvv"},
				{"an expired card", func(n *verification.New, _ *merchant.Key, _ **verification.Service) {
					n.Card.ExpYear = r.Clock.Now().Year() - 1
				}, fault.ValidationError, "card.expire_year"},
				{"a year of three digits", func(n *verification.New, _ *merchant.Key, _ **verification.Service) {
					n.Card.ExpYear = 999
				}, fault.ValidationError, "card.expire_year"},
				{"an expiry more than 50 years ahead", func(n *verification.New, _ *merchant.Key, _ **verification.Service) {
					n.Card.ExpYear = r.Clock.Now().Year() + 51
				}, fault.ValidationError, "card.expire_year"},
				{"no channel of the key takes the currency", func(n *verification.New, _ *merchant.Key, _ **verification.Service) {
					n.Currency = "CHF"
				}, fault.ChannelNotAvailable, "currency"},
				{"a profile without lookup", func(_ *verification.New, _ *merchant.Key, svc **verification.Service) {
					*svc = verification.NewService(r.Keyring, r.Clock.Now, uuid.NewString, provider.Registry{sandbox.Name: noLookup},
						r.Keyring, r.Store, store.ErrNotFound, r.svc.Render)
				}, fault.CapabilityNotSupported, ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					k, in, svc := r.key(), r.of("4242424242424242"), r.svc
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
					require.Empty(t, evs, "no card_verification.pending: no verification")
					require.Empty(t, r.storedHashes(), "no check of the card counted")
				})
			}
		})
	}
}

// TestCreate: an accepted verification is pending until the provider has
// sent its code, expires Lifetime later by its key's clock, and keeps no
// card number: the card travels sealed in its LookUp operation's secret
// (docs/design/decisions.md section 8), queued in the same transaction,
// and the check is counted by the card's keyed hash. A key's order_id
// names one verification; another key may use it.
func TestCreate(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			k := r.key()
			const number = "5555555555554444"
			in := r.of(number)
			ahead := r.Ahead(k, 48*time.Hour)
			v, err := r.create(ahead, k, in)
			require.NoError(t, err)
			require.Equal(t, verification.Pending, v.Status)
			require.Equal(t, "555555******4444", v.CardMask)
			require.Equal(t, r.Clock.Now().Add(48*time.Hour), v.CreatedAt)
			require.Equal(t, v.CreatedAt.Add(verification.Lifetime), v.ExpiresAt)

			stored := r.verification(v.ID)
			require.Equal(t, verification.Pending, stored.Status)
			require.Equal(t, v.ExpiresAt, stored.ExpiresAt)
			require.NotContains(t, fmt.Sprintf("%+v", *stored), number[4:], "no card number in the verification")
			require.Equal(t, []string{"card_verification.pending"}, r.Events(k, v.ID))
			require.Equal(t, r.cardHashes(number), r.storedHashes(), "the card's keyed hash, never its number")

			ops := storetest.OpenOperations(t, r.Store, v.ID)
			require.Len(t, ops, 1)
			op, err := r.Store.FindOperation(r.Ctx, ops[0])
			require.NoError(t, err)
			require.Equal(t, verification.OpCreate, op.Kind)
			sealed, err := r.Store.OperationSecret(r.Ctx, op.ID)
			require.NoError(t, err)
			require.NotContains(t, string(sealed), number[4:], "the card is sealed")

			r.Run(v.ID)
			got := r.verification(v.ID)
			require.Equal(t, verification.CodeSent, got.Status)
			require.NotEmpty(t, got.ProviderID)
			require.Equal(t, 1, r.Acquirer.Count(acquirer.EntryVerificationHold, op.ID), "the sum is held")
			_, err = r.Store.OperationSecret(r.Ctx, op.ID)
			require.ErrorIs(t, err, store.ErrNotFound, "the card is forgotten once the provider has it")
			require.Equal(t, []string{"card_verification.pending", "card_verification.code_sent"}, r.Events(k, v.ID))

			_, err = r.create(ahead, k, verification.New{OrderID: in.OrderID, Currency: "USD", Card: r.of("4242424242424242").Card})
			f := faultOf(t, err)
			require.Equal(t, fault.DuplicateOrderID, f.Code)
			require.Equal(t, "order_id", f.Field)
			require.Len(t, r.storedHashes(), 1, "the duplicate's check goes with its transaction")
			r.accepted(r.key(), verification.New{OrderID: in.OrderID, Currency: "USD", Card: r.of("4242424242424242").Card})
		})
	}
}

// TestVerify: a code is counted as it is accepted, right or wrong alike,
// and sent to the provider as an operation, sealed; the provider's answer
// decides (docs/sandbox.md: the right code is the card's last four
// digits). Only a verification waiting for its code takes one.
func TestVerify(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			for _, tc := range []struct {
				name   string
				card   int    // luhnCard's seed
				code   string // "": the card's last four digits
				status verification.Status
				events []string
			}{
				{"the right code", 1, "", verification.Verified,
					[]string{"card_verification.pending", "card_verification.code_sent", "card_verification.verified"}},
				{"a wrong code", 2, "0000", verification.CodeSent,
					[]string{"card_verification.pending", "card_verification.code_sent"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					k, number := r.key(), luhnCard(tc.card)
					if tc.code == "" {
						tc.code = number[12:]
					}
					v := r.codeSent(k, number)
					got, err := r.verify(k, v.ID, tc.code)
					require.NoError(t, err)
					require.Equal(t, verification.CodeSent, got.Status, "the answer comes later")
					require.Equal(t, 1, got.VerifyAttempts, "counted at once")
					require.Equal(t, 1, r.verification(v.ID).VerifyAttempts)
					ops := storetest.OpenOperations(t, r.Store, v.ID)
					require.Len(t, ops, 1)
					sealed, err := r.Store.OperationSecret(r.Ctx, ops[0])
					require.NoError(t, err)
					require.NotContains(t, string(sealed), `"`+tc.code+`"`, "the code is sealed")

					r.Run(v.ID)
					got = r.verification(v.ID)
					require.Equal(t, tc.status, got.Status)
					require.Equal(t, 1, got.VerifyAttempts)
					require.Equal(t, tc.events, r.Events(k, v.ID))
				})
			}

			t.Run("not before the code is sent", func(t *testing.T) {
				k := r.key()
				v := r.accepted(k, r.of("4242424242424242"))
				_, err := r.verify(k, v.ID, "4242")
				require.Equal(t, fault.VerificationNotAwaitingCode, faultOf(t, err).Code)
				require.Zero(t, r.verification(v.ID).VerifyAttempts)
			})
		})
	}
}

// TestAttemptsLimit: at most MaxAttempts codes are ever sent, counted as
// they are accepted, so a fourth is refused even before the provider has
// answered the third; the provider fails the verification at its limit
// with authentication_failed (docs/design/decisions.md section 15).
func TestAttemptsLimit(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			require.Equal(t, 3, verification.DefaultMaxAttempts, "the sandbox's limit")
			for _, answered := range []bool{true, false} {
				t.Run(fmt.Sprintf("each answered before the next: %v", answered), func(t *testing.T) {
					k := r.key()
					v := r.codeSent(k, "4242424242424242")
					for i := 1; i <= verification.DefaultMaxAttempts; i++ {
						got, err := r.verify(k, v.ID, fmt.Sprintf("000%d", i))
						require.NoError(t, err, "code %d", i)
						require.Equal(t, i, got.VerifyAttempts)
						if answered {
							r.Run(v.ID)
						}
					}
					_, err := r.verify(k, v.ID, "4242")
					require.Equal(t, fault.VerificationNotAwaitingCode, faultOf(t, err).Code, "the right code, too late")
					require.Equal(t, verification.DefaultMaxAttempts, r.verification(v.ID).VerifyAttempts)

					r.Run(v.ID)
					got := r.verification(v.ID)
					require.Equal(t, verification.Failed, got.Status)
					require.Equal(t, verification.DeclineAuthenticationFailed, got.DeclineCode)
					require.Equal(t, []string{"card_verification.pending", "card_verification.code_sent", "card_verification.failed"},
						r.Events(k, v.ID))
				})
			}
		})
	}
}

// TestCardLimit: at most CardLimit verifications of one card number start
// in CardWindow, across all keys; the next is 429 rate_limited, retryable
// once the oldest check leaves the window, which Retry-After names. The
// window is real time: a key's sandbox clock does not move it; and a check
// counts after a rotation of the master keys (docs/design/decisions.md
// section 15). The checks are kept by the card's keyed hash only.
func TestCardLimit(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			const number = "4242424242424242"
			a, b := r.key(), r.key()
			for i, k := range []merchant.Key{a, b, a} {
				r.accepted(k, r.of(number))
				if i < verification.CardLimit-1 {
					r.Clock.Add(time.Hour)
				}
			}
			limited := func(t *testing.T, k merchant.Key, ctx context.Context, retryAfter time.Duration) {
				t.Helper()
				_, err := r.create(ctx, k, r.of(number))
				f := faultOf(t, err)
				require.Equal(t, fault.RateLimited, f.Code)
				require.True(t, f.Retryable)
				require.Equal(t, retryAfter, f.RetryAfter)
			}
			t.Run("the fourth of a card", func(t *testing.T) {
				limited(t, b, r.Ctx, verification.CardWindow-2*time.Hour)
				limited(t, r.key(), r.Ctx, verification.CardWindow-2*time.Hour)
				r.accepted(a, r.of(luhnCard(1)))
			})
			t.Run("a key's clock ahead does not move the window", func(t *testing.T) {
				c := r.key()
				limited(t, c, r.Ahead(c, 25*time.Hour), verification.CardWindow-2*time.Hour)
			})
			t.Run("a check counts after a rotation of the master keys", func(t *testing.T) {
				require.NoError(t, r.Keyring.Rotate(filepath.Join(t.TempDir(), "master.key")))
				limited(t, a, r.Ctx, verification.CardWindow-2*time.Hour)
			})
			t.Run("free again once the oldest check is out of the window", func(t *testing.T) {
				r.Clock.Add(verification.CardWindow - 2*time.Hour)
				r.accepted(b, r.of(number))
				limited(t, b, r.Ctx, time.Hour)
			})
			hashes := r.storedHashes()
			require.Len(t, hashes, 5, "the card's four checks and another card's")
			for _, h := range hashes {
				require.Len(t, h, 64, "an HMAC-SHA256, hex")
				require.NotContains(t, h, number[4:])
			}
			require.Equal(t, 4, count(hashes, r.cardHashes(number)...), "the card's checks, each under the key of its time")
		})
	}
}

// TestExpiry: the expiry job of a verification waits until ExpiresAt;
// then one still waiting for its code fails with verification_expired and
// the provider is asked, as an operation of its own, to let the hold go
// (docs/design/decisions.md section 15); one still waiting for the
// provider's answer is not failed but looked at again an hour later; an
// ended one is left alone.
func TestExpiry(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			t.Run("waiting for its code", func(t *testing.T) {
				k := r.key()
				v := r.codeSent(k, "4242424242424242")
				r.Clock.Add(verification.Lifetime - time.Minute)
				require.Equal(t, time.Minute+time.Second, r.expire(v.ID), "before its deadline the job waits")
				require.Equal(t, verification.CodeSent, r.verification(v.ID).Status)

				r.Clock.Add(time.Minute)
				require.Zero(t, r.expire(v.ID))
				got := r.verification(v.ID)
				require.Equal(t, verification.Failed, got.Status)
				require.Equal(t, verification.DeclineExpired, got.DeclineCode)
				_, err := r.verify(k, v.ID, "4242")
				require.Equal(t, fault.VerificationNotAwaitingCode, faultOf(t, err).Code)

				ops := storetest.OpenOperations(t, r.Store, v.ID)
				require.Len(t, ops, 1)
				op, err := r.Store.FindOperation(r.Ctx, ops[0])
				require.NoError(t, err)
				require.Equal(t, verification.OpRelease, op.Kind)
				r.Run(v.ID)
				released := 0
				for _, e := range r.Acquirer.Ledger() {
					if e.Kind == acquirer.EntryRelease && e.Reason == "expired" && e.ResourceID == got.ProviderID {
						released++
					}
				}
				require.Equal(t, 1, released, "the hold let go at the acquirer")
				require.Equal(t, verification.Failed, r.verification(v.ID).Status, "the release changes no status")
				require.Equal(t, []string{"card_verification.pending", "card_verification.code_sent", "card_verification.failed"},
					r.Events(k, v.ID))
			})
			t.Run("waiting for the provider", func(t *testing.T) {
				v := r.accepted(r.key(), r.of("4242424242424242"))
				r.Clock.Add(verification.Lifetime)
				require.Equal(t, time.Hour, r.expire(v.ID))
				require.Equal(t, verification.Pending, r.verification(v.ID).Status)
			})
			t.Run("verified before", func(t *testing.T) {
				k := r.key()
				number := luhnCard(20)
				v := r.codeSent(k, number)
				_, err := r.verify(k, v.ID, number[12:])
				require.NoError(t, err)
				r.Run(v.ID)
				r.Clock.Add(verification.Lifetime)
				require.Zero(t, r.expire(v.ID))
				require.Equal(t, verification.Verified, r.verification(v.ID).Status)
				require.Empty(t, storetest.OpenOperations(t, r.Store, v.ID), "no release")
			})
		})
	}
}

// TestLostCompareAndSet: a verification changed since it was read is not
// overwritten: a code submitted on the stale copy answers
// verification.ErrConflict, the verification's own conflict (422
// verification_not_awaiting_code, retryable), and its transaction leaves
// nothing: no attempt counted, no code queued.
func TestLostCompareAndSet(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			k := r.key()
			v := r.codeSent(k, "4242424242424242")
			stale := r.verification(v.ID)
			_, err := r.verify(k, v.ID, "0001")
			require.NoError(t, err)

			err = r.Store.InTx(r.Ctx, func(tx *store.Tx) error {
				_, err := r.svc.Verify(r.Ctx, tx, stale, "0002")
				return err
			})
			require.ErrorIs(t, err, verification.ErrConflict)
			f, ok := fault.ConflictAnswer(err)
			require.True(t, ok)
			require.Equal(t, fault.VerificationNotAwaitingCode, f.Code)
			require.True(t, f.Retryable)
			require.Equal(t, 1, r.verification(v.ID).VerifyAttempts, "the winner's attempt only")
			require.Len(t, storetest.OpenOperations(t, r.Store, v.ID), 1, "the winner's code only")
		})
	}
}

// TestAnswers: each answer of the provider, in every status, through the
// one save (docs/verifications.md, the status table): a final status is
// never left; a code_sent answer after a later state does not move it
// back; an unreadable answer moves to manual_review where the life cycle
// allows; a failure Paygate decided because the provider could not be
// asked about a code says nothing of the card. Every change records its
// card_verification.<status> event; no change records none.
func TestAnswers(t *testing.T) {
	t.Parallel()
	const (
		codeSent   = "code sent"
		succeeded  = "succeeded"
		declined   = "declined"
		failed     = "failed"
		unreadable = "unreadable"
		undecided  = "not asked about a code"
	)
	answers := []string{codeSent, succeeded, declined, failed, unreadable, undecided}
	// want[from][i] is the status after answers[i].
	want := map[verification.Status][]verification.Status{
		verification.Pending:      {verification.CodeSent, verification.Verified, verification.Failed, verification.Failed, verification.ManualReview, verification.Pending},
		verification.CodeSent:     {verification.CodeSent, verification.Verified, verification.Failed, verification.Failed, verification.ManualReview, verification.CodeSent},
		verification.ManualReview: {verification.CodeSent, verification.Verified, verification.Failed, verification.Failed, verification.ManualReview, verification.ManualReview},
		verification.Verified:     {verification.Verified, verification.Verified, verification.Verified, verification.Verified, verification.Verified, verification.Verified},
		verification.Failed:       {verification.Failed, verification.Failed, verification.Failed, verification.Failed, verification.Failed, verification.Failed},
	}
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db)
			card := 0
			for _, from := range []verification.Status{verification.Pending, verification.CodeSent, verification.ManualReview,
				verification.Verified, verification.Failed} {
				for i, answer := range answers {
					t.Run(string(from)+", "+answer, func(t *testing.T) {
						k := r.key()
						card++
						v := r.verification(r.accepted(k, r.of(luhnCard(card))).ID)
						// The verification is put in from behind the life cycle's
						// back: the store's write alone, no event.
						v.Status = from
						require.NoError(t, r.Store.UpdateVerification(r.Ctx, v))
						before := r.Events(k, v.ID)

						op := &operation.Operation{ID: uuid.NewString(), Resource: verification.Resource, ResourceID: v.ID,
							Kind: verification.OpCreate}
						var out verification.Outcome
						switch answer {
						case codeSent:
							out.Status = provider.StatusCodeSent
						case succeeded:
							out.Status = provider.StatusSucceeded
						case declined:
							out.Status, out.DeclineCode = provider.StatusDeclined, "card_declined"
						case failed:
							out.Status = provider.StatusFailed
						case undecided:
							op.Kind = verification.OpVerify
							out = r.handler.Failed(op, "provider_unavailable").(verification.Outcome)
						}
						err := r.Store.InTx(r.Ctx, func(tx *store.Tx) error {
							if answer == unreadable {
								return r.handler.Unreadable(r.Ctx, tx, op)
							}
							return r.handler.Apply(r.Ctx, tx, op, out)
						})
						require.NoError(t, err)

						got := r.verification(v.ID)
						require.Equal(t, want[from][i], got.Status)
						if want[from][i] == from {
							require.Equal(t, before, r.Events(k, v.ID), "no event")
							return
						}
						require.Equal(t, append(before, "card_verification."+string(want[from][i])), r.Events(k, v.ID))
						switch answer {
						case declined:
							require.Equal(t, "card_declined", got.DeclineCode)
						case failed:
							require.Equal(t, "processing_error", got.DeclineCode, "a failure without a code")
						}
					})
				}
			}
		})
	}
}

func count(hashes []string, of ...string) int {
	n := 0
	for _, h := range hashes {
		if slices.Contains(of, h) {
			n++
		}
	}
	return n
}
