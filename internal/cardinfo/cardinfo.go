// Package cardinfo is the BIN base: what Paygate knows of a card from the
// first 6 or 8 digits of its number (OpenAPI schema CardInformation,
// getCardInformation (GET /cards/information)). The base is versioned: each
// imported file is a version, exactly one version is active, and the active
// one answers both the lookup endpoint and the classification of a card at
// payment time, so the two always agree.
//
// No freely licensed BIN file exists (docs/design/dependencies.md, BIN data):
// the default version, built into the binary, holds the public scheme ranges
// and the sandbox's test BINs, and is meant to be replaced by a licensed
// file.
package cardinfo

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/country"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/provider"
)

// Source tells which source answered a lookup (CardInformation.source).
type Source string

// The sources.
const (
	// BINBase is the platform's own versioned BIN base, authoritative.
	BINBase Source = "bin_base"
	// Provider is the payment provider, asked only for BINs the active
	// version does not cover.
	Provider Source = "provider"
)

// Details is what an entry of the base says of the cards it covers: the
// optional fields of CardInformation. Scheme and Type are lower case.
type Details struct {
	Scheme        string
	Type          string
	Level         string
	Issuer        string
	Country       string
	CountryCode   string // ISO 3166-1 alpha-2, upper case
	IssuerWebsite string
	IssuerPhone   string
}

// Info is the answer to a lookup.
type Info struct {
	BIN string // as queried: 6 or 8 digits
	Details
	Source Source
}

// Entry is one row of a version: a 6- or 8-digit BIN, or a range of
// 8-digit BINs (a range's BIN is empty).
type Entry struct {
	BIN       string
	RangeLow  string // 8 digits, inclusive
	RangeHigh string // 8 digits, inclusive
	Details
}

// IsRange reports whether the entry is a range rather than one BIN.
func (e Entry) IsRange() bool { return e.BIN == "" }

// Version is one imported BIN file (or the default data).
type Version struct {
	ID          string
	Label       string
	Source      string // the imported file's name, or "built-in"
	Entries     int64
	CreatedAt   time.Time
	ActivatedAt *time.Time // the last activation
	Active      bool
}

// Store is what lookups and listings need from storage.
type Store interface {
	// MatchBIN finds the active version's entry for a 6- or 8-digit BIN:
	// for 8 digits the 8-digit entry, else its 6-digit prefix's; for 6
	// digits the 6-digit entry; else the narrowest range holding every card
	// of the BIN. ok is false when none matches.
	MatchBIN(ctx context.Context, bin string) (e Entry, ok bool, err error)
	ListBINVersions(ctx context.Context) ([]Version, error)
}

// Tx is what imports and activations need, inside one transaction.
type Tx interface {
	HasBINVersions(ctx context.Context) (bool, error)
	CreateBINVersion(ctx context.Context, v Version) (created bool, err error)
	AddBINEntries(ctx context.Context, versionID string, es []Entry) error
	SetBINVersionEntries(ctx context.Context, versionID string, n int64) error
	ActivateBINVersion(ctx context.Context, versionID string, at time.Time) error
	FindBINVersion(ctx context.Context, versionID string) (Version, error)
}

// Fallback asks the payment provider about a BIN the base does not cover.
// An error of kind provider.NotFound (or provider.Unsupported) means the
// provider does not know it either.
type Fallback func(ctx context.Context, bin string) (provider.BINInfo, error)

// Service looks BINs up and manages the versions.
type Service struct {
	Store Store
	Now   func() time.Time
	NewID func() string
	Log   *slog.Logger // may be nil
}

// ValidBIN reports whether s is a BIN the API accepts: exactly 6 or 8 ASCII
// digits (getCardInformation (GET /cards/information)). A full card number
// is not one.
func ValidBIN(s string) bool {
	return (len(s) == 6 || len(s) == 8) && card.Digits(s)
}

// invalidBIN never quotes the value: it may be a whole card number.
func invalidBIN() error {
	return fault.OnField(fault.InvalidBIN, "bin",
		"bin must be exactly 6 or 8 digits: the start of a card number, never the whole number")
}

func binNotFound() error {
	return fault.OnField(fault.BINNotFound, "bin", "neither the BIN base nor the payment provider knows this BIN")
}

// Lookup answers endpoint 17: the active version first (Source BINBase),
// then fallback when the version does not cover the BIN (Source Provider).
// Errors: 400 invalid_bin for anything but 6 or 8 digits; 404 bin_not_found
// when neither source knows the BIN; 503 unavailable, retryable, when the
// provider had to be asked and could not answer.
func (s *Service) Lookup(ctx context.Context, bin string, fallback Fallback) (Info, error) {
	if !ValidBIN(bin) {
		return Info{}, invalidBIN()
	}
	e, ok, err := s.Store.MatchBIN(ctx, bin)
	if err != nil {
		return Info{}, err
	}
	if ok {
		return Info{BIN: bin, Details: e.Details, Source: BINBase}, nil
	}
	if fallback == nil {
		return Info{}, binNotFound()
	}
	p, err := fallback(ctx, bin)
	if err != nil {
		if ctx.Err() != nil {
			return Info{}, ctx.Err()
		}
		switch provider.KindOf(err) {
		case provider.NotFound, provider.Unsupported:
			return Info{}, binNotFound()
		}
		if s.Log != nil {
			s.Log.Warn("provider BIN lookup failed", "kind", string(provider.KindOf(err)), "error", err)
		}
		return Info{}, fault.New(fault.Unavailable,
			"the BIN is not in the BIN base and the payment provider could not be asked; retry later")
	}
	d := fromProvider(p)
	if d == (Details{}) {
		return Info{}, binNotFound()
	}
	return Info{BIN: bin, Details: d, Source: Provider}, nil
}

// fromProvider tidies a provider's answer into the shapes the client API
// promises (lower-case scheme and type, an assigned country code or none).
func fromProvider(p provider.BINInfo) Details {
	d := Details{
		Scheme: strings.ToLower(strings.TrimSpace(p.Scheme)), Type: strings.ToLower(strings.TrimSpace(p.Type)),
		Level: strings.TrimSpace(p.Level), Issuer: strings.TrimSpace(p.Issuer), Country: strings.TrimSpace(p.Country),
		CountryCode:   strings.ToUpper(strings.TrimSpace(p.CountryCode)),
		IssuerWebsite: strings.TrimSpace(p.IssuerWebsite), IssuerPhone: strings.TrimSpace(p.IssuerPhone),
	}
	if !country.Known(d.CountryCode) {
		d.CountryCode = ""
	}
	return d
}

// Classify tells what the active version knows of a card number at payment
// time, from its first 8 digits (6 for the 12- and 13-digit numbers whose
// 8 would show too much: card.BIN). It asks no provider. ok is false when
// the base does not cover the card or cannot be read; the number is never
// logged or kept.
func (s *Service) Classify(ctx context.Context, number string) (Info, bool) {
	return s.ClassifyIn(ctx, s.Store, number)
}

// Matcher is the BIN lookup of a store or of one of its transactions.
type Matcher interface {
	MatchBIN(ctx context.Context, bin string) (e Entry, ok bool, err error)
}

// ClassifyIn is Classify through q: inside a request's transaction, pass
// the transaction (on SQLite the store itself would wait for it).
func (s *Service) ClassifyIn(ctx context.Context, q Matcher, number string) (Info, bool) {
	bin := card.BIN(number, 8)
	if bin == "" {
		bin = card.BIN(number, 6)
	}
	if bin == "" {
		return Info{}, false
	}
	e, ok, err := q.MatchBIN(ctx, bin)
	if err != nil {
		if s.Log != nil && !errors.Is(err, context.Canceled) {
			s.Log.Warn("BIN base lookup failed while classifying a card", "error", err)
		}
		return Info{}, false
	}
	if !ok {
		return Info{}, false
	}
	return Info{BIN: bin, Details: e.Details, Source: BINBase}, true
}

// Versions lists every version, oldest first, the active one marked.
func (s *Service) Versions(ctx context.Context) ([]Version, error) {
	return s.Store.ListBINVersions(ctx)
}

// Activate makes a version the one that answers, from the moment tx
// commits. An unknown id is the store's not-found error.
func (s *Service) Activate(ctx context.Context, tx Tx, versionID string) (Version, error) {
	if err := tx.ActivateBINVersion(ctx, versionID, s.Now().UTC()); err != nil {
		return Version{}, err
	}
	return tx.FindBINVersion(ctx, versionID)
}
