package stripe

// decline is how a Stripe decline reads in Paygate: its decline code and
// whether it is hard (a subscription is canceled at once, never retried:
// docs/design/decisions.md section 11) or soft (retried on the dunning
// schedule). docs/providers/stripe.md has the table.
type decline struct {
	Code    string
	Hard    bool
	Message string // payer-safe, written by Paygate
	// Reroute: another acquirer may take the payment (docs/design/decisions.md
	// section 17): Stripe could not process it, the card was not refused.
	Reroute bool
}

var (
	declined     = decline{"card_declined", false, "The card was declined.", false}
	insufficient = decline{"insufficient_funds", false, "The card has insufficient funds.", false}
	doNotRetry   = decline{"do_not_retry", true, "The card was declined.", false}
	authFailed   = decline{"authentication_failed", false, "The payer did not pass authentication.", false}
	processing   = decline{"processing_error", false, "The payment could not be processed.", true}
)

// declines maps Stripe's decline_code (and, where it has none, its error
// code) to Paygate's. Anything else is card_declined, soft.
var declines = map[string]decline{
	// soft: the same card may pass later
	"generic_decline":                       declined,
	"do_not_honor":                          declined,
	"card_declined":                         declined,
	"call_issuer":                           declined,
	"card_not_supported":                    declined,
	"card_velocity_exceeded":                declined,
	"currency_not_supported":                declined,
	"duplicate_transaction":                 declined,
	"issuer_not_available":                  declined,
	"no_action_taken":                       declined,
	"not_permitted":                         declined,
	"reenter_transaction":                   declined,
	"service_not_allowed":                   declined,
	"transaction_not_allowed":               declined,
	"try_again_later":                       declined,
	"approve_with_id":                       declined,
	"incorrect_cvc":                         declined,
	"invalid_cvc":                           declined,
	"incorrect_zip":                         declined,
	"insufficient_funds":                    insufficient,
	"withdrawal_count_limit_exceeded":       insufficient,
	"authentication_required":               authFailed,
	"payment_intent_authentication_failure": authFailed,
	"processing_error":                      processing,
	// hard: retrying cannot help
	"expired_card":                      {"expired_card", true, "The card has expired.", false},
	"invalid_expiry_month":              {"expired_card", true, "The card has expired.", false},
	"invalid_expiry_year":               {"expired_card", true, "The card has expired.", false},
	"incorrect_number":                  {"incorrect_number", true, "The card number is not valid.", false},
	"invalid_number":                    {"incorrect_number", true, "The card number is not valid.", false},
	"invalid_account":                   {"account_closed", true, "The card's account is closed.", false},
	"new_account_information_available": {"account_closed", true, "The card's account is closed.", false},
	"lost_card":                         {"lost_card", true, "The card was declined.", false},
	"stolen_card":                       {"stolen_card", true, "The card was declined.", false},
	"pickup_card":                       {"stolen_card", true, "The card was declined.", false},
	"fraudulent":                        doNotRetry,
	"merchant_blacklist":                doNotRetry,
	"restricted_card":                   doNotRetry,
	"revocation_of_all_authorizations":  doNotRetry,
	"revocation_of_authorization":       doNotRetry,
	"security_violation":                doNotRetry,
	"stop_payment_order":                doNotRetry,
	"testmode_decline":                  doNotRetry,
}

// declineOf maps a Stripe decline (its decline_code, else its code).
func declineOf(declineCode, code string) decline {
	if d, ok := declines[declineCode]; ok {
		return d
	}
	if d, ok := declines[code]; ok {
		return d
	}
	return declined
}
