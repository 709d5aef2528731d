package server_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/storetest"
)

var (
	cardRowRE    = regexp.MustCompile(`<tr data-card="([^"]+)">`)
	deleteButtRE = regexp.MustCompile(`data-delete="([^"]+)"`)
)

// cardPage is one page of /cabinet/cards as a browser reads it.
type cardPage struct {
	status     int
	body, csrf string
	ids        []string
	next       string
}

func readCardPage(t *testing.T, b *staffBrowser, target string) cardPage {
	t.Helper()
	status, body, csrf := b.get(target)
	p := cardPage{status: status, body: body, csrf: csrf}
	for _, m := range cardRowRE.FindAllStringSubmatch(body, -1) {
		p.ids = append(p.ids, m[1])
	}
	if m := nextLinkRE.FindStringSubmatch(body); m != nil {
		p.next = html.UnescapeString(m[1])
	}
	// Never a card number nor a provider's token (docs/design/decisions.md
	// section 13).
	require.NotContains(t, body, "4242424242424242")
	require.NotContains(t, body, "tok_")
	return p
}

// allCards walks the list from target, page by page, and returns every id
// in order and how many pages it took.
func allCards(t *testing.T, e *env, b *staffBrowser, target string) ([]string, int) {
	t.Helper()
	var ids []string
	pages := 0
	for next := target; next != ""; pages++ {
		p := readCardPage(t, b, e.url+next)
		require.Equal(t, http.StatusOK, p.status, p.body)
		ids = append(ids, p.ids...)
		next = p.next
	}
	return ids, pages
}

// TestCabinetCards drives the saved cards page with plain HTTP on both
// databases (docs/cabinet.md, "Saved cards"): the key's usable cards as the
// signed API lists them, newest first, in keyset pages of 50, filtered by
// an exact customer reference, masked; Delete does what
// deletePaymentMethodToken does, at the key's clock, after which a payout
// with the card answers saved_card_not_found; a viewer, a forged or
// missing anti-forgery token, another key's card and a deleted card
// change nothing.
func TestCabinetCards(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()

		// 54 cards of key A: two payers taking turns, two cards per second
		// (equal times cross a page boundary), then one deleted through the
		// API; two cards of key B.
		var aCards []string
		for i := range 54 {
			ref := fmt.Sprintf("cust-%d", i%2)
			aCards = append(aCards, savedCard(t, e, e.aKey.ID, ref).ID)
			if i%2 == 1 {
				e.clock.Add(time.Second)
			}
		}
		gone := savedCard(t, e, e.aKey.ID, "cust-gone")
		require.Equal(t, http.StatusNoContent, deleteToken(t, e.a, gone.ID).Status)
		theirs := savedCard(t, e, e.bKey.ID, "bee-cust")
		theirs2 := savedCard(t, e, e.bKey.ID, "bee-cust")

		// The API's order is the page's.
		api, _ := tokens(t, e.a, "?limit=100")
		want := tokenIDs(api.Items)
		require.Len(t, want, 54)

		// Without a session: the sign-in page; a POST is refused.
		stranger := newStaffBrowser(t)
		status, _, _ := stranger.get(e.url + "/cabinet/cards")
		require.Equal(t, http.StatusSeeOther, status)
		status, _, _ = stranger.post(e.url+"/cabinet/cards/"+aCards[0]+"/delete", url.Values{})
		require.Equal(t, http.StatusForbidden, status)

		viewer := e.signedInStaff(t, "vera@example.com", e.aKey.ID)
		admin := e.signedInAdmin(t, "adam@example.com", e.aKey.ID)
		bAdmin := e.signedInAdmin(t, "bea@example.com", e.bKey.ID)

		t.Run("the key's usable cards, newest first, 50 a page", func(t *testing.T) {
			for _, b := range []*staffBrowser{viewer, admin} {
				got, pages := allCards(t, e, b, "/cabinet/cards")
				require.Equal(t, want, got)
				require.Equal(t, 2, pages)
			}
			p := readCardPage(t, viewer, e.url+"/cabinet/cards")
			require.Len(t, p.ids, 50)
			require.NotContains(t, p.body, gone.ID, "a deleted card is not listed")
			require.NotContains(t, p.body, theirs.ID)
			require.NotContains(t, p.body, "bee-cust")
			row := p.body[strings.Index(p.body, `data-card="`+want[0]+`"`):]
			row = row[:strings.Index(row, "</tr>")]
			c, err := e.store.FindSavedCardForKey(ctx, e.aKey.ID, want[0])
			require.NoError(t, err)
			for _, cell := range []string{"<td>" + c.CustomerReference + "</td>", "<td>424242******4242</td>", "<td>visa</td>",
				fmt.Sprintf("<td>12/%d</td>", e.clock.Now().Year()+2), "<td>" + c.CreatedAt.UTC().Format("2006-01-02 15:04") + "</td>"} {
				require.Contains(t, row, cell)
			}
		})

		t.Run("an exact customer reference", func(t *testing.T) {
			api, _ := tokens(t, e.a, "?limit=100&customer_reference=cust-1")
			got, pages := allCards(t, e, viewer, "/cabinet/cards?customer_reference=cust-1")
			require.Equal(t, tokenIDs(api.Items), got)
			require.Len(t, got, 27)
			require.Equal(t, 1, pages)
			for _, q := range []string{"cust-", "CUST-1", "bee-cust", "cust-gone"} {
				p := readCardPage(t, viewer, e.url+"/cabinet/cards?customer_reference="+url.QueryEscape(q))
				require.Equal(t, http.StatusOK, p.status)
				require.Empty(t, p.ids, q)
			}
			p := readCardPage(t, viewer, e.url+"/cabinet/cards?after=nonsense")
			require.Equal(t, http.StatusBadRequest, p.status)
		})

		t.Run("a viewer sees no button and a forged POST is refused", func(t *testing.T) {
			p := readCardPage(t, viewer, e.url+"/cabinet/cards")
			require.Empty(t, deleteButtRE.FindAllString(p.body, -1))
			require.NotContains(t, p.body, "/delete")
			status, body, _ := viewer.post(e.url+"/cabinet/cards/"+want[0]+"/delete", url.Values{"csrf_token": {p.csrf}})
			require.Equal(t, http.StatusForbidden, status, body)
			_, err := e.store.FindSavedCardForKey(ctx, e.aKey.ID, want[0])
			require.NoError(t, err, "nothing changed")
		})

		t.Run("no or a wrong anti-forgery token is refused", func(t *testing.T) {
			p := readCardPage(t, admin, e.url+"/cabinet/cards")
			var buttons []string
			for _, m := range deleteButtRE.FindAllStringSubmatch(p.body, -1) {
				buttons = append(buttons, m[1])
			}
			require.Equal(t, p.ids, buttons, "an admin has a Delete button on each row")
			for _, form := range []url.Values{{}, {"csrf_token": {"forged"}}, {"csrf_token": {p.csrf + "x"}}} {
				status, _, _ := admin.post(e.url+"/cabinet/cards/"+want[0]+"/delete", form)
				require.Equal(t, http.StatusForbidden, status)
			}
			// Another browser's token: refused too.
			vp := readCardPage(t, viewer, e.url+"/cabinet/cards")
			status, _, _ := admin.post(e.url+"/cabinet/cards/"+want[0]+"/delete", url.Values{"csrf_token": {vp.csrf}})
			require.Equal(t, http.StatusForbidden, status)
			_, err := e.store.FindSavedCardForKey(ctx, e.aKey.ID, want[0])
			require.NoError(t, err, "nothing changed")
		})

		t.Run("another key's card and a deleted one are 404, nothing changed", func(t *testing.T) {
			p := readCardPage(t, admin, e.url+"/cabinet/cards")
			for _, id := range []string{theirs.ID, gone.ID, "no-such-card"} {
				status, body, _ := admin.post(e.url+"/cabinet/cards/"+id+"/delete", url.Values{"csrf_token": {p.csrf}})
				require.Equal(t, http.StatusNotFound, status, id)
				require.NotContains(t, body, "bee-cust")
			}
			status, _, _ := admin.post(e.url+"/cabinet/cards/"+theirs.ID+"/delete?key="+e.bKey.ID, url.Values{"csrf_token": {p.csrf}})
			require.Equal(t, http.StatusNotFound, status, "a key not granted")
			page, _ := tokens(t, e.b, "")
			require.ElementsMatch(t, []string{theirs.ID, theirs2.ID}, tokenIDs(page.Items), "B's cards are untouched")

			// Key B's admin never sees A's cards, by list or by POST.
			bp := readCardPage(t, bAdmin, e.url+"/cabinet/cards")
			require.ElementsMatch(t, []string{theirs.ID, theirs2.ID}, bp.ids)
			require.NotContains(t, bp.body, "cust-1")
			status, _, _ = bAdmin.post(e.url+"/cabinet/cards/"+want[0]+"/delete", url.Values{"csrf_token": {bp.csrf}})
			require.Equal(t, http.StatusNotFound, status)
			status, _, _ = bAdmin.get(e.url + "/cabinet/cards?key=" + e.aKey.ID)
			require.Equal(t, http.StatusNotFound, status)
			api, _ := tokens(t, e.a, "?limit=100")
			require.Equal(t, want, tokenIDs(api.Items), "A's cards are untouched")
		})

		t.Run("an admin deletes: the API's deletion, at the key's clock", func(t *testing.T) {
			// Key A's clock runs three days ahead: the card is deleted at
			// that time, as through the API.
			resp := e.post(e.a, "/api/v1/sandbox/clock/advance", `{"seconds":259200}`)
			require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
			victim, kept := want[1], want[0]
			saved, err := e.store.FindSavedCardForKey(ctx, e.aKey.ID, victim)
			require.NoError(t, err)
			payout := func(cardID string) string {
				return `{"order_id":"po-` + cardID + `","amount_minor":1200,"currency":"USD","account":"main",
					"payout_method":{"type":"card","saved_card_id":"` + cardID + `"}}`
			}

			p := readCardPage(t, admin, e.url+"/cabinet/cards?customer_reference="+saved.CustomerReference)
			require.Contains(t, p.ids, victim)
			before := e.clock.Now()
			status, _, loc := admin.post(e.url+"/cabinet/cards/"+victim+"/delete",
				url.Values{"csrf_token": {p.csrf}, "customer_reference": {saved.CustomerReference}})
			require.Equal(t, http.StatusSeeOther, status)
			require.Equal(t, "/cabinet/cards?customer_reference="+saved.CustomerReference+"&done=deleted", loc)

			after := readCardPage(t, admin, e.url+loc)
			require.Equal(t, http.StatusOK, after.status)
			require.Contains(t, after.body, "The saved card was deleted")
			require.NotContains(t, after.ids, victim)
			api, _ := tokens(t, e.a, "?limit=100")
			require.NotContains(t, tokenIDs(api.Items), victim)
			require.Len(t, api.Items, 53)

			c, err := e.store.FindSavedCardForCharge(ctx, e.aKey.ID, victim)
			require.NoError(t, err)
			require.NotNil(t, c.DeletedAt)
			require.WithinDuration(t, before.Add(72*time.Hour), *c.DeletedAt, time.Minute, "the key's clock")
			// deletePaymentMethodToken records no event; neither does the page.
			require.Empty(t, e.events(e.a, "?resource_id="+victim).Items)

			// The card can no longer be used; the one kept still can.
			resp = e.post(e.a, "/api/v1/payouts", payout(victim))
			require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s", resp.Body)
			require.Equal(t, "saved_card_not_found", errorCode(t, resp))
			resp = e.post(e.a, "/api/v1/payouts", payout(kept))
			require.Equal(t, http.StatusCreated, resp.Status, "%s", resp.Body)

			// A second deletion: 404, as the API's second DELETE.
			status, _, _ = admin.post(e.url+"/cabinet/cards/"+victim+"/delete", url.Values{"csrf_token": {p.csrf}})
			require.Equal(t, http.StatusNotFound, status)
			require.Equal(t, http.StatusNotFound, deleteToken(t, e.a, victim).Status)
		})

		t.Run("with two keys the key is kept", func(t *testing.T) {
			require.NoError(t, e.app.Cabinet.Grant(ctx, "adam@example.com", e.bKey.ID))
			p := readCardPage(t, admin, e.url+"/cabinet/cards")
			require.NotContains(t, p.ids, theirs.ID, "key A first")
			require.Contains(t, p.body, `name="key"`)
			p = readCardPage(t, admin, e.url+"/cabinet/cards?key="+e.bKey.ID)
			require.ElementsMatch(t, []string{theirs.ID, theirs2.ID}, p.ids)
			require.Contains(t, p.body, `action="/cabinet/cards/`+theirs.ID+`/delete?key=`+e.bKey.ID+`"`)
			// The shown key decides: B's card is not A's.
			status, _, _ := admin.post(e.url+"/cabinet/cards/"+theirs.ID+"/delete?key="+e.aKey.ID, url.Values{"csrf_token": {p.csrf}})
			require.Equal(t, http.StatusNotFound, status)
			status, _, loc := admin.post(e.url+"/cabinet/cards/"+theirs.ID+"/delete?key="+e.bKey.ID, url.Values{"csrf_token": {p.csrf}})
			require.Equal(t, http.StatusSeeOther, status)
			require.Equal(t, "/cabinet/cards?done=deleted&key="+e.bKey.ID, loc)
			page, _ := tokens(t, e.b, "")
			require.Equal(t, []string{theirs2.ID}, tokenIDs(page.Items))
		})
	})
}
