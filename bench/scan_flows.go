package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

var csrfRe = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// checkoutPage opens a hosted session and posts its form with the canary
// card, as a browser without JavaScript does (docs/design/decisions.md
// section 9).
func (f *pciFlows) checkoutPage(year int) error {
	p, err := f.payment("hosted checkout form", "/api/v1/payment-sessions",
		`{"order_id":"pci-hosted","amount_minor":4400,"currency":"USD","customer":{"email":"pci@example.com"}}`, 201)
	if err != nil {
		return err
	}
	browser, _, csrf, err := f.openCheckout(p.CheckoutURL)
	if err != nil {
		return err
	}
	_, final, err := f.browse(browser, "POST", p.CheckoutURL, url.Values{"csrf_token": {csrf}, "method": {"card"},
		"number": {canaryCard}, "expire_month": {"11"}, "expire_year": {fmt.Sprint(year)}, "cvv": {canaryCVV},
		"cardholder": {"Pci Canary"}, "email": {"pci@example.com"}, "first_name": {"Pci"}, "last_name": {"Canary"},
		"country": {"GB"}, "line1": {"1 Canary Wharf"}})
	if err != nil {
		return err
	}
	f.answers.WriteString(final + "\n") // no card data in any URL either
	return nil
}

// checkoutMobile pays a hosted session with the canary mobile account and
// types the canary code into the page's one-time code form.
func (f *pciFlows) checkoutMobile() error {
	p, err := f.payment("hosted mobile + one-time code", "/api/v1/payment-sessions",
		`{"order_id":"pci-hosted-mobile","amount_minor":4700,"currency":"USD"}`, 201)
	if err != nil {
		return err
	}
	browser, _, csrf, err := f.openCheckout(p.CheckoutURL)
	if err != nil {
		return err
	}
	spaced := "+1 (202) 555-" + canaryPhone[len(canaryPhone)-4:]
	page, _, err := f.browse(browser, "POST", p.CheckoutURL, url.Values{"csrf_token": {csrf}, "method": {"mobile"}, "phone": {spaced}})
	if err != nil {
		return err
	}
	// The page waits up to 3 s for the provider, then reloads itself
	// until the one-time code form shows.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(page, `/confirm"`); {
		if time.Now().After(deadline) {
			return fmt.Errorf("the hosted mobile payment shows no one-time code form")
		}
		if err := sleepCtx(f.ctx, 100*time.Millisecond); err != nil { // as the page's own refresh
			return err
		}
		if page, _, err = f.browse(browser, "GET", p.CheckoutURL, nil); err != nil {
			return err
		}
	}
	m := csrfRe.FindStringSubmatch(page)
	if m == nil {
		return fmt.Errorf("the one-time code form has no anti-forgery field")
	}
	_, final, err := f.browse(browser, "POST", p.CheckoutURL+"/confirm", url.Values{"csrf_token": {m[1]}, "value": {canaryOTP}})
	f.answers.WriteString(final + "\n")
	return err
}

// openCheckout opens a hosted page in a new browser (with cookies) and
// returns the browser, the page and its anti-forgery token.
func (f *pciFlows) openCheckout(checkoutURL string) (*http.Client, string, string, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, "", "", err
	}
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	page, _, err := f.browse(browser, "GET", checkoutURL, nil)
	if err != nil {
		return nil, "", "", err
	}
	m := csrfRe.FindStringSubmatch(page)
	if m == nil {
		return nil, "", "", fmt.Errorf("the checkout page has no anti-forgery field")
	}
	return browser, page, m[1], nil
}

// browse fetches a page (following redirects) and keeps it with the
// answers; it returns the page and the URL it ended at.
func (f *pciFlows) browse(browser *http.Client, method, target string, form url.Values) (string, string, error) {
	var resp *http.Response
	var err error
	if method == "POST" {
		resp, err = browser.PostForm(target, form)
	} else {
		resp, err = browser.Get(target)
	}
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", "", err
	}
	f.answers.Write(b)
	f.answers.WriteByte('\n')
	return string(b), resp.Request.URL.String(), nil
}

// verification runs a card verification with the canary card and a wrong
// canary code, when the API serves verifications.
func (f *pciFlows) verification(year int) error {
	resp, err := f.do("POST", "/api/v1/card-verifications", fmt.Sprintf(
		`{"order_id":"pci-verification","currency":"USD","card":{"number":%q,"expire_month":11,"expire_year":%d,"cvv":%q}}`,
		canaryCard, year, canaryCVV))
	if err != nil {
		return err
	}
	if resp.Status == http.StatusNotFound {
		f.notServed = append(f.notServed, "card verifications")
		return nil
	}
	var v struct {
		ID string `json:"verification_id"`
	}
	if resp.Status != http.StatusCreated || json.Unmarshal(resp.Body, &v) != nil {
		return fmt.Errorf("card verification: %d %s", resp.Status, truncate(resp.Body, 300))
	}
	f.keep("card-verifications", v.ID)
	f.flows = append(f.flows, "card verification")
	for range 100 { // until the code is sent, then one wrong code
		resp, err = f.do("POST", "/api/v1/card-verifications/"+v.ID+"/verify", fmt.Sprintf(`{"code":%q}`, canaryVerify))
		if err != nil || resp.Status != http.StatusUnprocessableEntity {
			return err
		}
		if err := sleepCtx(f.ctx, 20*time.Millisecond); err != nil { // polling until the verification awaits the code
			return err
		}
	}
	return nil
}

// payoutCustomer is the customer a Visa payout carries (the canary cards
// are Visa).
const payoutCustomer = `"customer":{"first_name":"Pci","last_name":"Canary","email":"pci@example.com","billing_address":{"country":"GB","line1":"1 Canary Wharf"}}`

// payout sends a payout to the canary card, then one to the sandbox's 3DS
// payout card confirmed with the canary payout code (a wrong one: the
// payout declines, the code must vanish all the same), when the API serves
// payouts; both are driven to a final status, so that the provider has seen
// the card and the code.
func (f *pciFlows) payout(year int) error {
	body := func(order, number string) string {
		return fmt.Sprintf(`{"order_id":%q,"amount_minor":4500,"currency":"USD","account":"pci-account",%s,`+
			`"payout_method":{"type":"card","card":{"number":%q,"expire_month":11,"expire_year":%d,"cvv":%q,"cardholder":"Pci Canary"}}}`,
			pciOrderPrefix+order, payoutCustomer, number, year, canaryCVV)
	}
	id, err := f.createPayout(body("payout", canaryCard))
	if err != nil || id == "" {
		return err
	}
	f.flows = append(f.flows, "payout")
	if _, err := f.payoutUntil(id, "succeeded", "declined", "failed"); err != nil {
		return err
	}
	id, err = f.createPayout(body("payout-3ds", payout3DSCard))
	if err != nil {
		return err
	}
	if _, err := f.payoutUntil(id, "requires_action"); err != nil {
		return err
	}
	resp, err := f.do("POST", "/api/v1/payouts/"+id+"/confirm", fmt.Sprintf(`{"value":%q}`, canaryPayoutOTP))
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("payout confirm: %d %s", resp.Status, truncate(resp.Body, 300))
	}
	status, err := f.payoutUntil(id, "succeeded", "declined", "failed")
	if err != nil {
		return err
	}
	if status != "declined" {
		return fmt.Errorf("the 3DS payout confirmed with a wrong code ended %s, not declined", status)
	}
	f.flows = append(f.flows, "3DS payout + one-time code")
	return nil
}

// createPayout creates a payout and keeps its id; "" when payouts are not
// served.
func (f *pciFlows) createPayout(body string) (string, error) {
	resp, err := f.do("POST", "/api/v1/payouts", body)
	if err != nil {
		return "", err
	}
	if resp.Status == http.StatusNotFound {
		f.notServed = append(f.notServed, "payouts")
		return "", nil
	}
	var p struct {
		ID string `json:"payout_id"`
	}
	if resp.Status != http.StatusCreated || json.Unmarshal(resp.Body, &p) != nil {
		return "", fmt.Errorf("payout: %d %s", resp.Status, truncate(resp.Body, 300))
	}
	f.keep("payouts", p.ID)
	return p.ID, nil
}

// payoutUntil polls a payout until its status is one of want, for a minute
// at most, and returns that status.
func (f *pciFlows) payoutUntil(id string, want ...string) (string, error) {
	var p struct {
		Status string `json:"status"`
	}
	for deadline := time.Now().Add(time.Minute); ; {
		resp, err := f.do("GET", "/api/v1/payouts/"+id, "")
		if err != nil {
			return "", err
		}
		if err := json.Unmarshal(resp.Body, &p); err != nil {
			return "", err
		}
		if slices.Contains(want, p.Status) {
			return p.Status, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("payout %s still %s after a minute, waiting for %v", id, p.Status, want)
		}
		if err := sleepCtx(f.ctx, 20*time.Millisecond); err != nil { // polling the payout's status
			return "", err
		}
	}
}
