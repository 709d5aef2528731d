package store

import "context"

// MigrateTo applies Paygate's migrations up to version, for tests of a
// migration on data written before it.
func (s *Store) MigrateTo(ctx context.Context, version int64) error { return s.migrate(ctx, version) }
