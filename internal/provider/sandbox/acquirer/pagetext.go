package acquirer

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// labels is the text of the sandbox's pages in one language. The pages
// speak the payment's locale (client API: locale "chooses the language of
// pages the provider renders").
type labels struct {
	Lang           string // the HTML lang attribute (BCP 47: ua is "uk")
	Banner         string
	ChallengeTitle string
	ChallengeText  string
	Amount         string
	Approve        string
	Deny           string
	CheckoutTitle  string
	CardNumber     string
	ExpMonth       string
	ExpYear        string
	CVV            string
	Holder         string
	Pay            string
	InvalidCard    string
	DoneTitle      string
	Status         string
	NotFound       string
	BadRequest     string
	Statuses       map[string]string
}

var pageLabels = map[string]labels{
	"en": {
		Lang:           "en",
		Banner:         "Paygate sandbox acquirer: test page, no real money moves.",
		ChallengeTitle: "Confirm your payment",
		ChallengeText:  "Your bank asks you to confirm this operation.",
		Amount:         "Amount",
		Approve:        "Approve",
		Deny:           "Deny",
		CheckoutTitle:  "Pay by card",
		CardNumber:     "Card number",
		ExpMonth:       "Month",
		ExpYear:        "Year",
		CVV:            "CVV / CVC",
		Holder:         "Cardholder name",
		Pay:            "Pay",
		InvalidCard:    "Please check the card details.",
		DoneTitle:      "Done",
		Status:         "Status",
		NotFound:       "This page does not exist.",
		BadRequest:     "The form could not be read.",
		Statuses: map[string]string{
			wire.StatusSucceeded: "paid", wire.StatusAuthorized: "amount held", wire.StatusDeclined: "declined",
			wire.StatusFailed: "failed", wire.StatusCanceled: "canceled", wire.StatusExpired: "expired",
			wire.StatusRequiresAction: "awaiting confirmation", wire.StatusOpen: "awaiting payment",
		},
	},
	"ru": {
		Lang:           "ru",
		Banner:         "Тестовый эквайер Paygate: реальные деньги не списываются.",
		ChallengeTitle: "Подтверждение платежа",
		ChallengeText:  "Ваш банк просит подтвердить эту операцию.",
		Amount:         "Сумма",
		Approve:        "Подтвердить",
		Deny:           "Отклонить",
		CheckoutTitle:  "Оплата картой",
		CardNumber:     "Номер карты",
		ExpMonth:       "Месяц",
		ExpYear:        "Год",
		CVV:            "CVV / CVC",
		Holder:         "Имя владельца карты",
		Pay:            "Оплатить",
		InvalidCard:    "Проверьте данные карты.",
		DoneTitle:      "Готово",
		Status:         "Статус",
		NotFound:       "Такой страницы нет.",
		BadRequest:     "Не удалось прочитать форму.",
		Statuses: map[string]string{
			wire.StatusSucceeded: "оплачено", wire.StatusAuthorized: "сумма заблокирована", wire.StatusDeclined: "отклонено",
			wire.StatusFailed: "ошибка", wire.StatusCanceled: "отменено", wire.StatusExpired: "срок истёк",
			wire.StatusRequiresAction: "ожидает подтверждения", wire.StatusOpen: "ожидает оплаты",
		},
	},
	"ua": {
		Lang:           "uk",
		Banner:         "Тестовий еквайр Paygate: справжні гроші не списуються.",
		ChallengeTitle: "Підтвердження платежу",
		ChallengeText:  "Ваш банк просить підтвердити цю операцію.",
		Amount:         "Сума",
		Approve:        "Підтвердити",
		Deny:           "Відхилити",
		CheckoutTitle:  "Оплата карткою",
		CardNumber:     "Номер картки",
		ExpMonth:       "Місяць",
		ExpYear:        "Рік",
		CVV:            "CVV / CVC",
		Holder:         "Ім'я власника картки",
		Pay:            "Сплатити",
		InvalidCard:    "Перевірте дані картки.",
		DoneTitle:      "Готово",
		Status:         "Статус",
		NotFound:       "Такої сторінки немає.",
		BadRequest:     "Не вдалося прочитати форму.",
		Statuses: map[string]string{
			wire.StatusSucceeded: "сплачено", wire.StatusAuthorized: "суму заблоковано", wire.StatusDeclined: "відхилено",
			wire.StatusFailed: "помилка", wire.StatusCanceled: "скасовано", wire.StatusExpired: "термін минув",
			wire.StatusRequiresAction: "очікує підтвердження", wire.StatusOpen: "очікує оплати",
		},
	},
}

// labelsFor picks the page language: ?locale= when a tester asks for one,
// else the resource's locale, else ru (the client API's default).
func labelsFor(r *http.Request, resource string) labels {
	if l, ok := pageLabels[r.URL.Query().Get("locale")]; ok {
		return l
	}
	return pageLabels[locale(resource)]
}

func (l labels) status(st string) string {
	if t, ok := l.Statuses[st]; ok {
		return t
	}
	return st
}

// minorDigits lists the currencies whose minor unit is not a hundredth
// (ISO 4217); the pages only show amounts, so a short list is enough.
var minorDigits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3, "CLF": 4,
}

// formatAmount shows minor units as a decimal amount: 123456 USD is
// "1234.56 USD".
func formatAmount(minor int64, currency string) string {
	digits, ok := minorDigits[currency]
	if !ok {
		digits = 2
	}
	if digits == 0 {
		return fmt.Sprintf("%d %s", minor, currency)
	}
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	unit := int64(1)
	for range digits {
		unit *= 10
	}
	frac := fmt.Sprintf("%0*d", digits, minor%unit)
	return strings.TrimSpace(fmt.Sprintf("%s%d.%s %s", sign, minor/unit, frac, currency))
}
