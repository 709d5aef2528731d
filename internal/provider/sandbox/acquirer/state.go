package acquirer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// stateVersion is the format of the state file; another version is refused
// rather than half-read.
const stateVersion = 1

// compactMinBytes is how much the changes appended to the state file must
// weigh, at least, before it is rewritten as one snapshot in the
// background; they must also weigh as much as the snapshot, so that the
// work of rewriting stays proportional to the changes (docs/sandbox.md,
// "The state file").
const compactMinBytes = 32 << 20

// state is everything the sandbox knows. Its fields are what the state file
// holds, so it carries masked cards only. A state also serves as a change:
// the resources a request changed, and the ledger entries it added.
type state struct {
	Version       int                       `json:"version,omitempty"`
	Payments      map[string]*payment       `json:"payments,omitempty"`
	Verifications map[string]*verification  `json:"verifications,omitempty"`
	Payouts       map[string]*payout        `json:"payouts,omitempty"`
	Sessions      map[string]*hostedSession `json:"sessions,omitempty"`
	Tokens        map[string]*savedCard     `json:"tokens,omitempty"`
	Keys          map[string]*keyRecord     `json:"keys,omitempty"`
	Ledger        []Entry                   `json:"ledger,omitempty"`
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

// The state file is a journal of JSON lines, each a state: the first a
// snapshot of everything, each later one a change (the resources a request
// touched, in full, and its new ledger entries). Appending one line per
// change keeps the cost of a change independent of how much the sandbox
// holds, which matters for benchmarks against an in-process sandbox. It is
// written before the answer is sent, so whatever a client was told is in
// the file; a line cut short by a kill is a change nobody was told of, and
// is dropped when the file is read.

// touch marks a resource as changed, for the next line of the journal.
// Kind is payment, verification, payout, session, token or key.
func (s *Server) touch(x ref) {
	if s.cfg.StateFile != "" && x.ID != "" {
		s.changed[x] = struct{}{}
	}
}

// load reads the state file, if there is one, and rewrites it as a single
// snapshot to append to.
func (s *Server) load() error {
	f, err := os.Open(s.cfg.StateFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("sandbox state: %w", err)
	default:
		st, err := readJournal(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("sandbox state %s: %w", s.cfg.StateFile, err)
		}
		s.st = st
	}
	for id, p := range s.st.Payments {
		if p.Status == wire.StatusAuthorized {
			s.holds[id] = p
		}
	}
	return s.snapshotLocked()
}

func readJournal(r io.Reader) (*state, error) {
	st := newState()
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var d state
			if jerr := json.Unmarshal(line, &d); jerr != nil {
				if errors.Is(err, io.EOF) && n > 1 {
					break // the last change, cut short: never answered
				}
				return nil, fmt.Errorf("line %d is not a state", n)
			}
			if n == 1 && d.Version != stateVersion {
				return nil, fmt.Errorf("version %d, want %d", d.Version, stateVersion)
			}
			st.merge(&d)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	return st, nil
}

func (st *state) merge(d *state) {
	maps.Copy(st.Payments, d.Payments)
	maps.Copy(st.Verifications, d.Verifications)
	maps.Copy(st.Payouts, d.Payouts)
	maps.Copy(st.Sessions, d.Sessions)
	maps.Copy(st.Tokens, d.Tokens)
	maps.Copy(st.Keys, d.Keys)
	st.Ledger = append(st.Ledger, d.Ledger...)
}

// saveLocked appends the changes since the last save as one line. If that
// fails, the next save writes a whole snapshot instead. Once the changes
// weigh enough it starts a compaction in the background.
func (s *Server) saveLocked() {
	if s.cfg.StateFile == "" || (len(s.changed) == 0 && s.written == len(s.st.Ledger)) {
		return
	}
	if s.journal == nil {
		if err := s.snapshotLocked(); err != nil {
			s.cfg.Logger.Error("sandbox: cannot save state", "file", s.cfg.StateFile, "err", err)
		}
		return
	}
	d := &state{Ledger: s.st.Ledger[s.written:]}
	for x := range s.changed {
		d.add(s.st, x)
	}
	line, err := json.Marshal(d)
	if err == nil {
		_, err = s.journal.Write(append(line, '\n'))
	}
	if err != nil {
		s.cfg.Logger.Error("sandbox: cannot save state", "file", s.cfg.StateFile, "err", err)
		s.journal.Close()
		s.journal = nil // snapshot next time
		s.gen++         // and drop a compaction under way
		return
	}
	clear(s.changed)
	s.written = len(s.st.Ledger)
	s.size += int64(len(line)) + 1
	if grown := s.size - s.snapSize; !s.compacting && !s.noCompact && grown >= s.compactMin && grown >= s.snapSize {
		s.compacting = true
		s.compactWG.Add(1)
		go s.compact(s.gen, s.size)
	}
}

// compact rewrites the state file as one snapshot without holding the
// lock while it works: it reads the file's first upto bytes (complete
// lines, all written under the lock) into a state of its own and writes
// that to a temporary file. Under the lock it then appends the lines
// written meanwhile and renames the temporary file over the state file,
// so a restart sees the old file or the new, each with every change. A
// snapshot written in place meanwhile (gen moved: a failed append, Close)
// makes the work moot, and it is dropped; a failure leaves the file as it
// is, to be tried again once as much more has been appended.
func (s *Server) compact(gen int, upto int64) {
	defer s.compactWG.Done()
	tmp, snap, err := s.writeCompacted(upto)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacting = false
	if err == nil && gen == s.gen {
		err = s.swapLocked(tmp, snap, upto)
	}
	if tmp != "" {
		os.Remove(tmp) // a no-op once renamed
	}
	if err != nil {
		s.cfg.Logger.Error("sandbox: cannot compact state", "file", s.cfg.StateFile, "err", err)
		s.snapSize = s.size // try again once as much more is appended
	}
}

// writeCompacted writes the state the file's first upto bytes hold as a
// single snapshot line to a temporary file beside it, and returns that
// file's name and size.
func (s *Server) writeCompacted(upto int64) (string, int64, error) {
	f, err := os.Open(s.cfg.StateFile)
	if err != nil {
		return "", 0, err
	}
	st, err := readJournal(io.LimitReader(f, upto))
	f.Close()
	if err != nil {
		return "", 0, err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return "", 0, err
	}
	t, err := os.CreateTemp(filepath.Dir(s.cfg.StateFile), ".sandbox-state-*")
	if err != nil {
		return "", 0, err
	}
	_, err = t.Write(append(b, '\n'))
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	return t.Name(), int64(len(b)) + 1, err
}

// swapLocked appends to the compacted file tmp the lines written to the
// state file after its first upto bytes, renames it over the state file
// and appends to it from now on.
func (s *Server) swapLocked(tmp string, snap, upto int64) error {
	old, err := os.Open(s.cfg.StateFile)
	if err != nil {
		return err
	}
	defer old.Close()
	t, err := os.OpenFile(tmp, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	tail, err := io.Copy(t, io.NewSectionReader(old, upto, s.size-upto))
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err == nil && tail != s.size-upto {
		err = fmt.Errorf("%d bytes appended meanwhile, %d copied", s.size-upto, tail)
	}
	if err == nil {
		err = os.Rename(tmp, s.cfg.StateFile)
	}
	if err != nil {
		return err
	}
	s.journal.Close()
	s.journal, err = os.OpenFile(s.cfg.StateFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		s.journal = nil // snapshot at the next change
		return err
	}
	s.size, s.snapSize = snap+tail, snap
	s.compacted++
	return nil
}

// add copies resource x of st into the change d.
func (d *state) add(st *state, x ref) {
	switch x.Kind {
	case "payment":
		d.Payments = put(d.Payments, x.ID, st.Payments[x.ID])
	case "verification":
		d.Verifications = put(d.Verifications, x.ID, st.Verifications[x.ID])
	case "payout":
		d.Payouts = put(d.Payouts, x.ID, st.Payouts[x.ID])
	case "session":
		d.Sessions = put(d.Sessions, x.ID, st.Sessions[x.ID])
	case "token":
		d.Tokens = put(d.Tokens, x.ID, st.Tokens[x.ID])
	case "key":
		d.Keys = put(d.Keys, x.ID, st.Keys[x.ID])
	}
}

func put[V any](m map[string]*V, id string, v *V) map[string]*V {
	if v == nil {
		return m
	}
	if m == nil {
		m = map[string]*V{}
	}
	m[id] = v
	return m
}

// snapshotLocked writes the whole state as the file's only line: to a
// temporary file beside it, renamed over it, so that a restart sees the
// old file or the new, never half of one. No fsync: the file must survive
// the death of the process, not of the machine.
func (s *Server) snapshotLocked() error {
	if s.journal != nil {
		s.journal.Close()
		s.journal = nil
	}
	s.gen++ // a compaction under way is moot
	b, err := json.Marshal(s.st)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(s.cfg.StateFile), ".sandbox-state-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.cfg.StateFile)
	}
	if err != nil {
		return err
	}
	j, err := os.OpenFile(s.cfg.StateFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	s.journal = j
	clear(s.changed)
	s.written = len(s.st.Ledger)
	s.size, s.snapSize = int64(len(b))+1, int64(len(b))+1
	return nil
}

// closeJournal closes the state file; the next change opens it again. No
// compaction starts afterwards, and one under way is dropped.
func (s *Server) closeJournal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noCompact = true
	s.saveLocked()
	s.gen++
	if s.journal != nil {
		s.journal.Close()
		s.journal = nil
	}
}
