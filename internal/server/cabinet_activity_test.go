package server_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/verification"
)

var (
	verificationRowRE = regexp.MustCompile(`<tr data-verification="([^"]+)">`)
	payoutRowRE       = regexp.MustCompile(`<tr data-payout="([^"]+)">`)
)

// listed is a row's (created, id): the lists' order, newest first.
type listed struct {
	created time.Time
	id      string
}

func newestFirst(rows []listed) []string {
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].created.Equal(rows[j].created) {
			return rows[i].created.After(rows[j].created)
		}
		return rows[i].id > rows[j].id
	})
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.id
	}
	return out
}

// walk reads a list from target page by page, checking each page with
// check, and returns every row's id in order and the number of pages.
func walk(t *testing.T, e *env, b *staffBrowser, target string, row *regexp.Regexp, check func(body string)) ([]string, int) {
	t.Helper()
	var ids []string
	pages := 0
	for next := target; next != ""; pages++ {
		status, body, _ := b.get(e.url + next)
		require.Equal(t, http.StatusOK, status, body)
		check(body)
		for _, m := range row.FindAllStringSubmatch(body, -1) {
			ids = append(ids, m[1])
		}
		next = ""
		if m := nextLinkRE.FindStringSubmatch(body); m != nil {
			next = html.UnescapeString(m[1])
		}
	}
	return ids, pages
}

// TestCabinetActivity drives the verifications and payouts pages with plain
// HTTP on both databases (docs/cabinet.md, "Verifications" and "Payouts"):
// the shown key's, newest first, in keyset pages of 50, by status; each
// one's page with its events; masks only, never a card number, a code or a
// wallet payload; another key's never listed and 404 by URL; never among
// the payments.
func TestCabinetActivity(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		numberA, numberB := luhnCard(7_140_001), luhnCard(7_140_002)

		// Through the API: a verification awaiting its code and two payouts
		// (a card, a wallet) of key A; one of each of key B.
		vA := e.awaitVerification(e.a, e.createVerification(e.a, "ver-a", numberA).VerificationID)
		require.Equal(t, "code_sent", vA.Status)
		vB := e.awaitVerification(e.b, e.createVerification(e.b, "ver-bee", numberB).VerificationID)
		poA := e.settlePayout(e.a, e.createPayout(e.a, payoutBody("4242424242424242", "")).PayoutID)
		require.Equal(t, "succeeded", poA.Status)
		wallet := e.settlePayout(e.a, e.createPayout(e.a, `{"order_id":"w-`+uuid.NewString()+`","amount_minor":700,
			"currency":"EUR","account":"main","payout_method":{"type":"apple_pay","wallet":{"token":"sandbox_success"}}}`).PayoutID)
		require.Equal(t, "succeeded", wallet.Status)
		poB := e.settlePayout(e.b, e.createPayout(e.b, payoutBody("4242424242424242", "")).PayoutID)

		// Earlier ones of both keys, stored as the API stores them: 55
		// each, in every status, one a minute, some at the same time.
		tv, err := e.store.FindVerificationByID(ctx, vA.VerificationID)
		require.NoError(t, err)
		tvB, err := e.store.FindVerificationByID(ctx, vB.VerificationID)
		require.NoError(t, err)
		tp, err := e.store.FindPayoutByID(ctx, poA.PayoutID)
		require.NoError(t, err)
		tpB, err := e.store.FindPayoutByID(ctx, poB.PayoutID)
		require.NoError(t, err)
		vStatuses := []verification.Status{verification.Pending, verification.CodeSent, verification.Verified,
			verification.Failed, verification.ManualReview}
		vRows := []listed{{tv.CreatedAt, tv.ID}}
		pRows := []listed{{tp.CreatedAt, tp.ID}}
		wp, err := e.store.FindPayoutByID(ctx, wallet.PayoutID)
		require.NoError(t, err)
		pRows = append(pRows, listed{wp.CreatedAt, wp.ID})
		vCount, pCount := map[string]int{string(tv.Status): 1}, map[string]int{string(tp.Status): 1}
		pCount[string(wp.Status)]++
		start := e.clock.Now().Add(-time.Hour)
		require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
			for i := range 55 {
				at := start.Add(-time.Duration(i/2) * time.Minute)
				for _, src := range []*verification.Verification{tv, tvB} {
					v := *src
					v.ID, v.OrderID = uuid.NewString(), fmt.Sprintf("%s-%d", src.OrderID, i)
					v.Status, v.DeclineCode = vStatuses[i%len(vStatuses)], ""
					if v.Status == verification.Failed {
						v.DeclineCode = verification.DeclineExpired
					}
					v.CreatedAt, v.UpdatedAt, v.ExpiresAt = at, at, at.Add(verification.Lifetime)
					if err := tx.CreateVerification(ctx, &v); err != nil {
						return err
					}
					if src == tv {
						vRows = append(vRows, listed{at, v.ID})
						vCount[string(v.Status)]++
					}
				}
				for _, src := range []*payout.Payout{tp, tpB} {
					p := *src
					p.ID, p.OrderID = uuid.NewString(), fmt.Sprintf("%s-%d", src.OrderID, i)
					p.Status, p.DeclineCode, p.ClientDescription = payout.Statuses[i%len(payout.Statuses)], "", ""
					if p.Status == payout.Declined {
						p.DeclineCode, p.ClientDescription = "card_declined", "The card issuer refused the transfer."
					}
					p.CreatedAt, p.UpdatedAt = at, at
					if err := tx.CreatePayout(ctx, &p); err != nil {
						return err
					}
					if src == tp {
						pRows = append(pRows, listed{at, p.ID})
						pCount[string(p.Status)]++
					}
				}
			}
			return nil
		}))
		wantV, wantP := newestFirst(vRows), newestFirst(pRows)
		require.Len(t, wantV, 56)
		require.Len(t, wantP, 57)
		theirs := []string{vB.VerificationID, poB.PayoutID, "ver-bee", tvB.OrderID, tpB.OrderID}

		// Never a number, a code or a wallet payload; never key B's.
		clean := func(t *testing.T, others []string) func(string) {
			return func(body string) {
				t.Helper()
				for _, secret := range []string{"4242424242424242", numberA, numberB, "sandbox_success"} {
					require.NotContains(t, body, secret)
				}
				for _, s := range others {
					require.NotContains(t, body, s)
				}
			}
		}

		// Without a session: the sign-in page.
		stranger := newStaffBrowser(t)
		for _, path := range []string{"/cabinet/verifications", "/cabinet/payouts", "/cabinet/payouts/" + poA.PayoutID,
			"/cabinet/verifications/" + vA.VerificationID} {
			status, _, _ := stranger.get(e.url + path)
			require.Equal(t, http.StatusSeeOther, status, path)
		}

		ann := e.signedInStaff(t, "ann@example.com", e.aKey.ID)
		bea := e.signedInStaff(t, "bea@example.com", e.bKey.ID)

		t.Run("verifications, newest first, 50 a page", func(t *testing.T) {
			got, pages := walk(t, e, ann, "/cabinet/verifications", verificationRowRE, clean(t, theirs))
			require.Equal(t, wantV, got)
			require.Equal(t, 2, pages)
			_, body, _ := ann.get(e.url + "/cabinet/verifications")
			row := body[strings.Index(body, `data-verification="`+vA.VerificationID+`"`):]
			row = row[:strings.Index(row, "</tr>")]
			for _, cell := range []string{`<td><span class="badge warn">code_sent</span></td>`, "<td>" + vA.CardMask + "</td>", ">0</td>",
				"<td>" + tv.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC") + "</td>", "<td>ver-a</td>",
				tv.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC")} {
				require.Contains(t, row, cell)
			}
			for status, n := range vCount {
				got, _ := walk(t, e, ann, "/cabinet/verifications?status="+status, verificationRowRE, clean(t, theirs))
				require.Len(t, got, n, status)
				for _, id := range got {
					v, err := e.store.FindVerificationByID(ctx, id)
					require.NoError(t, err)
					require.Equal(t, status, string(v.Status))
				}
			}
			got, _ = walk(t, e, ann, "/cabinet/verifications?status=bogus", verificationRowRE, clean(t, theirs))
			require.Len(t, got, 56, "an unknown status filters nothing")
		})

		t.Run("payouts, newest first, 50 a page", func(t *testing.T) {
			got, pages := walk(t, e, ann, "/cabinet/payouts", payoutRowRE, clean(t, theirs))
			require.Equal(t, wantP, got)
			require.Equal(t, 2, pages)
			_, body, _ := ann.get(e.url + "/cabinet/payouts")
			cells := func(id string) string {
				row := body[strings.Index(body, `data-payout="`+id+`"`):]
				return row[:strings.Index(row, "</tr>")]
			}
			for _, cell := range []string{`<td><span class="badge ok">succeeded</span></td>`, "USD 25.00", "<td>424242******4242</td>", "<td></td>"} {
				require.Contains(t, cells(poA.PayoutID), cell)
			}
			for _, cell := range []string{`<td><span class="badge ok">succeeded</span></td>`, "EUR 7.00", "<td>apple_pay</td>"} {
				require.Contains(t, cells(wallet.PayoutID), cell)
			}
			for status, n := range pCount {
				got, _ := walk(t, e, ann, "/cabinet/payouts?status="+status, payoutRowRE, clean(t, theirs))
				require.Len(t, got, n, status)
				for _, id := range got {
					p, err := e.store.FindPayoutByID(ctx, id)
					require.NoError(t, err)
					require.Equal(t, status, string(p.Status))
				}
			}
			_, body, _ = ann.get(e.url + "/cabinet/payouts?status=declined")
			require.Contains(t, body, "<td>card_declined</td>")
		})

		t.Run("each one's page with its events", func(t *testing.T) {
			status, body, _ := ann.get(e.url + "/cabinet/verifications/" + vA.VerificationID)
			require.Equal(t, http.StatusOK, status, body)
			clean(t, theirs)(body)
			for _, s := range []string{vA.VerificationID, "ver-a", "code_sent", vA.CardMask, "Code awaited until",
				tv.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC")} {
				require.Contains(t, body, s)
			}
			evs := e.events(e.a, "?resource_id="+vA.VerificationID).Items
			require.NotEmpty(t, evs)
			for _, ev := range evs {
				require.Contains(t, body, `data-event="`+ev.ID+`"`)
				require.Contains(t, body, ev.Type)
			}

			status, body, _ = ann.get(e.url + "/cabinet/payouts/" + poA.PayoutID)
			require.Equal(t, http.StatusOK, status, body)
			clean(t, theirs)(body)
			for _, s := range []string{poA.PayoutID, poA.OrderID, `<span class="badge ok">succeeded</span> (final)`, "USD 25.00", "424242******4242",
				"<dd>card</dd>", "<dd>main</dd>"} {
				require.Contains(t, body, s)
			}
			if b := poA.BankReference; b != nil && b.PaymentID != "" {
				require.Contains(t, body, b.PaymentID)
			}
			evs = e.events(e.a, "?resource_id="+poA.PayoutID).Items
			require.NotEmpty(t, evs)
			for _, ev := range evs {
				require.Contains(t, body, `data-event="`+ev.ID+`"`)
			}

			status, body, _ = ann.get(e.url + "/cabinet/payouts/" + wallet.PayoutID)
			require.Equal(t, http.StatusOK, status, body)
			clean(t, theirs)(body)
			require.Contains(t, body, "<dd>apple_pay</dd>")
			require.NotContains(t, body, "<dt>Card</dt>")

			var declined string
			for _, r := range pRows {
				if p, _ := e.store.FindPayoutByID(ctx, r.id); p.Status == payout.Declined {
					declined = p.ID
					break
				}
			}
			_, body, _ = ann.get(e.url + "/cabinet/payouts/" + declined)
			require.Contains(t, body, "card_declined: The card issuer refused the transfer.")
		})

		t.Run("another key's are never shown", func(t *testing.T) {
			for _, path := range []string{"/cabinet/verifications/" + vB.VerificationID, "/cabinet/payouts/" + poB.PayoutID,
				"/cabinet/verifications/" + poA.PayoutID, "/cabinet/payouts/" + vA.VerificationID,
				"/cabinet/payouts/no-such-payout", "/cabinet/verifications?key=" + e.bKey.ID, "/cabinet/payouts?key=" + e.bKey.ID} {
				status, body, _ := ann.get(e.url + path)
				require.Equal(t, http.StatusNotFound, status, path)
				clean(t, theirs)(body)
			}
			// Key B's user: B's only.
			ownV := []string{vB.VerificationID}
			ownP := []string{poB.PayoutID}
			got, _ := walk(t, e, bea, "/cabinet/verifications", verificationRowRE, clean(t, []string{vA.VerificationID, "ver-a"}))
			require.Len(t, got, 56)
			require.Equal(t, ownV, got[:1])
			got, _ = walk(t, e, bea, "/cabinet/payouts", payoutRowRE, clean(t, []string{poA.PayoutID, wallet.PayoutID, poA.OrderID}))
			require.Len(t, got, 56)
			require.Equal(t, ownP, got[:1])
			for _, path := range []string{"/cabinet/verifications/" + vA.VerificationID, "/cabinet/payouts/" + poA.PayoutID,
				"/cabinet/payouts/" + wallet.PayoutID} {
				status, body, _ := bea.get(e.url + path)
				require.Equal(t, http.StatusNotFound, status, path)
				require.NotContains(t, body, "ver-a")
			}
		})

		t.Run("a bad page link is 400", func(t *testing.T) {
			for _, path := range []string{"/cabinet/verifications?after=x", "/cabinet/payouts?after=12_"} {
				status, _, _ := ann.get(e.url + path)
				require.Equal(t, http.StatusBadRequest, status, path)
			}
		})

		t.Run("never among the payments", func(t *testing.T) {
			status, body, _ := ann.get(e.url + "/cabinet/payments")
			require.Equal(t, http.StatusOK, status)
			for _, id := range []string{vA.VerificationID, poA.PayoutID, wallet.PayoutID} {
				require.NotContains(t, body, id)
			}
		})

		t.Run("with two keys the key is kept", func(t *testing.T) {
			require.NoError(t, e.app.Cabinet.Grant(ctx, "ann@example.com", e.bKey.ID))
			got, _ := walk(t, e, ann, "/cabinet/payouts?key="+e.bKey.ID+"&status=succeeded", payoutRowRE, func(string) {})
			require.Contains(t, got, poB.PayoutID)
			_, body, _ := ann.get(e.url + "/cabinet/payouts?key=" + e.bKey.ID)
			require.Contains(t, body, `href="/cabinet/payouts/`+poB.PayoutID+`?key=`+e.bKey.ID+`"`)
			status, body, _ := ann.get(e.url + "/cabinet/payouts/" + poB.PayoutID)
			require.Equal(t, http.StatusOK, status, "a granted key's payout, whatever key the URL shows")
			require.Contains(t, body, `href="/cabinet/payouts?key=`+e.bKey.ID+`"`, "the navigation keeps the payout's key")
		})
	})
}
