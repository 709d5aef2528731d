package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/merchant"
)

// CreateKey stores a new access key.
func (q Queries) CreateKey(ctx context.Context, k merchant.Key) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO access_keys
		(id, access_key, name, environment, secret_sealed, direct_card_data, created_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		k.ID, k.AccessKey, k.Name, k.Environment, k.SecretSealed, k.DirectCardData,
		micros(k.CreatedAt), nullMicros(k.RevokedAt))
	return err
}

const keyColumns = `id, access_key, name, environment, secret_sealed, direct_card_data, created_at, revoked_at,
	clock_offset_micros`

func scanKey(row interface{ Scan(...any) error }) (merchant.Key, error) {
	var (
		k       merchant.Key
		created int64
		revoked sql.NullInt64
		offset  int64
	)
	err := row.Scan(&k.ID, &k.AccessKey, &k.Name, &k.Environment, &k.SecretSealed, &k.DirectCardData, &created, &revoked,
		&offset)
	k.ClockOffset = time.Duration(offset) * time.Microsecond
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNotFound
	}
	k.CreatedAt, k.RevokedAt = fromMicros(created), timePtr(revoked)
	return k, err
}

// FindKeyByAccessKey finds a key by its public id, revoked or not.
func (q Queries) FindKeyByAccessKey(ctx context.Context, accessKey string) (merchant.Key, error) {
	return scanKey(q.q.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM access_keys WHERE access_key = $1`, accessKey))
}

// ListKeys lists every key, oldest first.
func (q Queries) ListKeys(ctx context.Context) ([]merchant.Key, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+keyColumns+` FROM access_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []merchant.Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeKey revokes a key; revoking twice keeps the first time.
func (q Queries) RevokeKey(ctx context.Context, accessKey string, at time.Time) error {
	res, err := q.q.ExecContext(ctx, `UPDATE access_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE access_key = $1`,
		accessKey, micros(at))
	if err != nil {
		return err
	}
	return oneRow(res)
}

// EnsureChannel creates the channel if no channel has its alias, and returns
// the stored one.
func (q Queries) EnsureChannel(ctx context.Context, c merchant.Channel) (merchant.Channel, error) {
	methods, _ := json.Marshal(c.PaymentMethods)
	currencies, _ := json.Marshal(c.Currencies)
	_, err := q.q.ExecContext(ctx, `INSERT INTO channels
		(id, alias, provider, profile, payment_methods, currencies, checkout_mode, auto_assign, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (alias) DO NOTHING`,
		c.ID, c.Alias, c.Provider, c.Profile, string(methods), string(currencies), c.CheckoutMode, c.AutoAssign,
		micros(c.CreatedAt))
	if err != nil {
		return merchant.Channel{}, err
	}
	return q.FindChannelByAlias(ctx, c.Alias)
}

const channelColumns = `c.id, c.alias, c.provider, c.profile, c.payment_methods, c.currencies, c.checkout_mode, c.auto_assign, c.created_at`

func scanChannel(row interface{ Scan(...any) error }) (merchant.Channel, error) {
	var (
		c                   merchant.Channel
		methods, currencies string
		created             int64
	)
	err := row.Scan(&c.ID, &c.Alias, &c.Provider, &c.Profile, &methods, &currencies, &c.CheckoutMode, &c.AutoAssign, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, err
	}
	c.CreatedAt = fromMicros(created)
	if err := json.Unmarshal([]byte(methods), &c.PaymentMethods); err != nil {
		return c, err
	}
	return c, json.Unmarshal([]byte(currencies), &c.Currencies)
}

func (q Queries) channels(ctx context.Context, query string, args ...any) ([]merchant.Channel, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []merchant.Channel{}
	for rows.Next() {
		c, err := scanChannel(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ListChannels lists every channel by alias.
func (q Queries) ListChannels(ctx context.Context) ([]merchant.Channel, error) {
	return q.channels(ctx, `SELECT `+channelColumns+` FROM channels c ORDER BY c.alias`)
}

// FindChannelByAlias finds a channel by its alias.
func (q Queries) FindChannelByAlias(ctx context.Context, alias string) (merchant.Channel, error) {
	return scanChannel(q.q.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels c WHERE c.alias = $1`, alias))
}

// FindChannelByID finds a channel by id.
func (q Queries) FindChannelByID(ctx context.Context, id string) (merchant.Channel, error) {
	return scanChannel(q.q.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels c WHERE c.id = $1`, id))
}

// ChannelsForKey lists the channels a key's new payments may take, in
// routing order (position, then the time of assignment), each with its
// Route: its assigned channels but those of a disabled provider account
// (docs/design/decisions.md section 16).
func (q Queries) ChannelsForKey(ctx context.Context, keyID string) ([]merchant.Channel, error) {
	cs, err := q.assigned(ctx, keyID, true)
	if err != nil {
		return nil, err
	}
	out := make([]merchant.Channel, len(cs))
	for i, c := range cs {
		out[i] = c.Channel
	}
	return out, nil
}

// AssignedChannel is a channel assigned to a key, with its account's
// status.
type AssignedChannel struct {
	merchant.Channel
	AccountStatus string // enabled or disabled; enabled for the built-in sandbox
}

// AssignedChannels lists every channel assigned to a key in routing
// order, those of disabled accounts too (`paygate channels list --key`).
func (q Queries) AssignedChannels(ctx context.Context, keyID string) ([]AssignedChannel, error) {
	return q.assigned(ctx, keyID, false)
}

func (q Queries) assigned(ctx context.Context, keyID string, enabledOnly bool) ([]AssignedChannel, error) {
	where := ""
	if enabledOnly {
		where = ` AND (pa.status IS NULL OR pa.status = 'enabled')`
	}
	rows, err := q.q.QueryContext(ctx, `SELECT `+channelColumns+`, kc.position, kc.weight, kc.schemes, kc.card_countries,
		kc.min_amount, kc.max_amount, COALESCE(pa.status, 'enabled')
		FROM channels c JOIN key_channels kc ON kc.channel_id = c.id
		LEFT JOIN provider_accounts pa ON pa.name = c.provider
		WHERE kc.access_key_id = $1`+where+` ORDER BY kc.position, kc.assigned_at, c.alias`, keyID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []AssignedChannel{}
	for rows.Next() {
		var (
			a                                   AssignedChannel
			methods, currencies, schemes, cards string
			created                             int64
			lo, hi                              sql.NullInt64
		)
		c, r := &a.Channel, &a.Channel.Route
		if err := rows.Scan(&c.ID, &c.Alias, &c.Provider, &c.Profile, &methods, &currencies, &c.CheckoutMode,
			&c.AutoAssign, &created, &r.Position, &r.Weight, &schemes, &cards, &lo, &hi, &a.AccountStatus); err != nil {
			return nil, err
		}
		c.CreatedAt = fromMicros(created)
		if lo.Valid {
			r.MinAmount = &lo.Int64
		}
		if hi.Valid {
			r.MaxAmount = &hi.Int64
		}
		for _, f := range []struct {
			text string
			into *[]string
		}{{methods, &c.PaymentMethods}, {currencies, &c.Currencies}, {schemes, &r.Schemes}, {cards, &r.CardCountries}} {
			if err := json.Unmarshal([]byte(f.text), f.into); err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// AssignChannel gives a key a channel at the end of its routing order;
// assigning again changes nothing.
func (q Queries) AssignChannel(ctx context.Context, keyID, channelID string, at time.Time) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO key_channels (access_key_id, channel_id, assigned_at, position)
		VALUES ($1, $2, $3, (SELECT COALESCE(MAX(position), 0) + 1 FROM key_channels WHERE access_key_id = $1))
		ON CONFLICT (access_key_id, channel_id) DO NOTHING`, keyID, channelID, micros(at))
	return err
}

// PlaceChannel assigns a channel to a key with a route, or changes its
// route: at r.Position (1 is tried first; channels of one position share
// it, split by weight: docs/design/decisions.md section 17) or, with
// r.Position 0, where it is (last if new).
func (s *Store) PlaceChannel(ctx context.Context, keyID, channelID string, r merchant.Route, at time.Time) error {
	return s.placeChannel(ctx, keyID, channelID, r, at)
}

func (q Queries) placeChannel(ctx context.Context, keyID, channelID string, r merchant.Route, at time.Time) error {
	schemes, _ := json.Marshal(nonNilStrings(r.Schemes))
	cards, _ := json.Marshal(nonNilStrings(r.CardCountries))
	_, err := q.q.ExecContext(ctx, `INSERT INTO key_channels
		(access_key_id, channel_id, assigned_at, position, weight, schemes, card_countries, min_amount, max_amount)
		VALUES ($1, $2, $3, CASE WHEN $4 > 0 THEN $4 ELSE
			(SELECT COALESCE(MAX(position), 0) + 1 FROM key_channels WHERE access_key_id = $1) END, $5, $6, $7, $8, $9)
		ON CONFLICT (access_key_id, channel_id) DO UPDATE SET
			position = CASE WHEN $4 > 0 THEN excluded.position ELSE key_channels.position END,
			weight = excluded.weight, schemes = excluded.schemes, card_countries = excluded.card_countries,
			min_amount = excluded.min_amount, max_amount = excluded.max_amount`,
		keyID, channelID, micros(at), r.Position, max(r.Weight, 1), string(schemes), string(cards),
		nullInt64(r.MinAmount), nullInt64(r.MaxAmount))
	return err
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// CreateChannel stores a new channel; a taken alias is ErrDuplicate.
func (q Queries) CreateChannel(ctx context.Context, c merchant.Channel) error {
	methods, _ := json.Marshal(c.PaymentMethods)
	currencies, _ := json.Marshal(c.Currencies)
	_, err := q.q.ExecContext(ctx, `INSERT INTO channels
		(id, alias, provider, profile, payment_methods, currencies, checkout_mode, auto_assign, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		c.ID, c.Alias, c.Provider, c.Profile, string(methods), string(currencies), c.CheckoutMode, c.AutoAssign,
		micros(c.CreatedAt))
	return Classify(err)
}

// UnassignChannel takes a channel from a key.
func (q Queries) UnassignChannel(ctx context.Context, keyID, channelID string) error {
	res, err := q.q.ExecContext(ctx, `DELETE FROM key_channels WHERE access_key_id = $1 AND channel_id = $2`, keyID, channelID)
	if err != nil {
		return err
	}
	return oneRow(res)
}

func oneRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// FindKeyByID finds a key by its internal id.
func (q Queries) FindKeyByID(ctx context.Context, id string) (merchant.Key, error) {
	return scanKey(q.q.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM access_keys WHERE id = $1`, id))
}
