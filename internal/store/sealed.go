package store

import (
	"context"
	"fmt"
)

// SealedColumn is a column of sealed values (vault records) and how to read
// the id its AAD is bound to.
type SealedColumn struct {
	Table, KeyColumn, Column string
}

// SealedColumns are every column Paygate seals values in.
var SealedColumns = []SealedColumn{
	{"access_keys", "access_key", "secret_sealed"},
	{"payments", "id", "customer_sealed"},
	{"operation_secrets", "operation_id", "sealed"},
	{"saved_cards", "id", "token_sealed"},
	{"webhook_endpoints", "id", "secret_sealed"},
	{"webhook_endpoints", "id", "previous_secret_sealed"},
	{"provider_accounts", "name", "credentials_sealed"},
}

// RewrapSealed passes every sealed value of c through fn and stores what it
// returns, in the transaction. It returns how many values changed.
func (t *Tx) RewrapSealed(ctx context.Context, c SealedColumn, fn func(key string, sealed []byte) ([]byte, error)) (int, error) {
	rows, err := t.tx.QueryContext(ctx, fmt.Sprintf(`SELECT %s, %s FROM %s WHERE %s IS NOT NULL`, c.KeyColumn, c.Column, c.Table, c.Column))
	if err != nil {
		return 0, err
	}
	type row struct {
		key    string
		sealed []byte
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.key, &r.sealed); err != nil {
			rows.Close()
			return 0, err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	for _, r := range all {
		out, err := fn(r.key, r.sealed)
		if err != nil {
			return n, fmt.Errorf("%s.%s of %s: %w", c.Table, c.Column, r.key, err)
		}
		if string(out) == string(r.sealed) {
			continue
		}
		if _, err := t.tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET %s = $1 WHERE %s = $2`, c.Table, c.Column, c.KeyColumn), out, r.key); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
