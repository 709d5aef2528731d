package cardinfo

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"io"
	"strings"

	"github.com/google/uuid"
)

// batchSize is how many entries are written to the database at a time.
const batchSize = 500

// ImportRequest describes a BIN file to import.
type ImportRequest struct {
	Label    string    // shown in listings; default: Source
	Source   string    // the file's name
	CSV      io.Reader // the file (docs/bins.md)
	Activate bool      // make the new version the active one
}

// Import reads a BIN file into a new version inside tx. Every row is
// checked; a file with any problem is refused whole (an *ImportError listing
// them by line) and tx must be rolled back, so an import is never partial.
// With Activate the version answers once tx commits; otherwise the active
// version stays as it is.
func (s *Service) Import(ctx context.Context, tx Tx, req ImportRequest) (Version, error) {
	label := strings.TrimSpace(req.Label)
	if label == "" {
		label = req.Source
	}
	v := Version{ID: s.NewID(), Label: label, Source: req.Source, CreatedAt: s.Now().UTC()}
	v, created, err := s.load(ctx, tx, v, req.CSV, req.Activate)
	if err == nil && !created {
		err = errors.New("a BIN version with this id already exists")
	}
	return v, err
}

// load creates v and fills it from a BIN file. created is false, and
// nothing is done, when a version with v's id exists.
func (s *Service) load(ctx context.Context, tx Tx, v Version, csv io.Reader, activate bool) (_ Version, created bool, err error) {
	created, err = tx.CreateBINVersion(ctx, v)
	if err != nil || !created {
		return Version{}, false, err
	}
	n, err := readEntries(csv, batchSize, func(es []Entry) error { return tx.AddBINEntries(ctx, v.ID, es) })
	if err != nil {
		return Version{}, false, err
	}
	if err := tx.SetBINVersionEntries(ctx, v.ID, n); err != nil {
		return Version{}, false, err
	}
	if activate {
		v, err = s.Activate(ctx, tx, v.ID)
	} else {
		v, err = tx.FindBINVersion(ctx, v.ID)
	}
	return v, err == nil, err
}

// defaultCSV is the default version (docs/bins.md): the scheme ranges of
// internal/card's table and the sandbox's test BINs.
//
//go:embed default.csv
var defaultCSV []byte

// DefaultVersionID is the id of the default version. It is derived from the
// data, so that every process seeding an empty database at once writes the
// same row and all but the first find it there.
var DefaultVersionID = uuid.NewSHA1(uuid.NameSpaceOID, append([]byte("paygate.bins.default\n"), defaultCSV...)).String()

// DefaultSource is the Source of the built-in version.
const DefaultSource = "built-in"

// Seed creates and activates the default version when the database holds
// no version at all; otherwise it changes nothing. It is safe to run on
// every start, from several processes at once. It reports whether it seeded.
func (s *Service) Seed(ctx context.Context, tx Tx) (bool, error) {
	has, err := tx.HasBINVersions(ctx)
	if err != nil || has {
		return false, err
	}
	v := Version{ID: DefaultVersionID, Label: "default", Source: DefaultSource, CreatedAt: s.Now().UTC()}
	// Not created: another process seeded it first.
	_, created, err := s.load(ctx, tx, v, bytes.NewReader(defaultCSV), true)
	return created, err
}
