package openapi

// PaymentMethodToken is a saved card as the cabinet lists it (schema
// PaymentMethodToken; docs/design/decisions.md section 13): it has no field
// for a card number or the provider's token.
type PaymentMethodToken struct {
	ID                string `json:"id"`
	CustomerReference string `json:"customer_reference"`
	MaskedCard        string `json:"masked_card"`
	Scheme            string `json:"scheme"`
	ExpireMonth       int    `json:"expire_month"`
	ExpireYear        int    `json:"expire_year"`
	CreatedAt         Time   `json:"created_at"`
}

// PaymentMethodTokenList is a page of saved cards, the answer of
// listPaymentMethodTokens (GET /cabinet/v1/payment-method-tokens). Items is
// never null.
type PaymentMethodTokenList struct {
	Items      []PaymentMethodToken `json:"items"`
	NextCursor *string              `json:"next_cursor"`
}
