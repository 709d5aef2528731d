package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// stateVersion is the format of the state file; another version is refused
// rather than half-read.
const stateVersion = 1

// state is everything the sandbox knows. Its fields are what the state file
// holds, so it carries masked cards only.
type state struct {
	Version       int                       `json:"version"`
	Payments      map[string]*payment       `json:"payments"`
	Verifications map[string]*verification  `json:"verifications"`
	Payouts       map[string]*payout        `json:"payouts"`
	Sessions      map[string]*hostedSession `json:"sessions"`
	Tokens        map[string]*savedCard     `json:"tokens"`
	Keys          map[string]*keyRecord     `json:"keys"`
	Ledger        []Entry                   `json:"ledger"`
}

func newState() *state {
	return &state{
		Version:       stateVersion,
		Payments:      map[string]*payment{},
		Verifications: map[string]*verification{},
		Payouts:       map[string]*payout{},
		Sessions:      map[string]*hostedSession{},
		Tokens:        map[string]*savedCard{},
		Keys:          map[string]*keyRecord{},
	}
}

// base is what every resource has: its ids, how many more answers showing
// it are unreadable (the unreadable test card), and its times.
type base struct {
	ID          string    `json:"id"`
	OperationID string    `json:"operation_id"`
	Unreadable  int       `json:"unreadable,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// baseOf finds the resource x names, or nil.
func (s *Server) baseOf(x ref) *base {
	switch x.Kind {
	case "payment":
		if p := s.st.Payments[x.ID]; p != nil {
			return &p.base
		}
	case "verification":
		if v := s.st.Verifications[x.ID]; v != nil {
			return &v.base
		}
	case "payout":
		if p := s.st.Payouts[x.ID]; p != nil {
			return &p.base
		}
	case "session":
		if h := s.st.Sessions[x.ID]; h != nil {
			return &h.base
		}
	}
	return nil
}

// load reads the state file; a missing file is an empty state.
func (s *Server) load() error {
	b, err := os.ReadFile(s.cfg.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox state: %w", err)
	}
	st := newState()
	if err := json.Unmarshal(b, st); err != nil {
		return fmt.Errorf("sandbox state %s: not a state file: %w", s.cfg.StateFile, err)
	}
	if st.Version != stateVersion {
		return fmt.Errorf("sandbox state %s: version %d, want %d", s.cfg.StateFile, st.Version, stateVersion)
	}
	fresh := newState() // maps a file left out (null) are made again
	if st.Payments == nil {
		st.Payments = fresh.Payments
	}
	if st.Verifications == nil {
		st.Verifications = fresh.Verifications
	}
	if st.Payouts == nil {
		st.Payouts = fresh.Payouts
	}
	if st.Sessions == nil {
		st.Sessions = fresh.Sessions
	}
	if st.Tokens == nil {
		st.Tokens = fresh.Tokens
	}
	if st.Keys == nil {
		st.Keys = fresh.Keys
	}
	s.st = st
	for id, p := range st.Payments {
		if p.Status == stAuthorized {
			s.holds[id] = p
		}
	}
	return nil
}

// saveLocked writes the state file when something changed: to a temporary
// file beside it, then renamed over it, so that a reader (or a restart)
// sees the old state or the new, never half of one. No fsync: the file
// must survive the death of the process, not of the machine.
func (s *Server) saveLocked() {
	if !s.dirty {
		return
	}
	s.dirty = false
	if s.cfg.StateFile == "" {
		return
	}
	if err := s.writeState(); err != nil {
		s.cfg.Logger.Error("sandbox: cannot save state", "file", s.cfg.StateFile, "err", err)
	}
}

func (s *Server) writeState() error {
	b, err := json.Marshal(s.st)
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.cfg.StateFile)
	f, err := os.CreateTemp(dir, ".sandbox-state-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), s.cfg.StateFile)
}
