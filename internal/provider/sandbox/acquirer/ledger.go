package acquirer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// The ledger's types live in package wire, since the adapter reads the
// ledger over HTTP too (Adapter.Ledger); these names keep the acquirer's
// API whole.
type Entry = wire.Entry

// The kinds of ledger entries (wire.EntryCharge and its siblings).
const (
	EntryCharge           = wire.EntryCharge
	EntryHold             = wire.EntryHold
	EntryCapture          = wire.EntryCapture
	EntryRelease          = wire.EntryRelease
	EntryRefund           = wire.EntryRefund
	EntryTransfer         = wire.EntryTransfer
	EntryVerificationHold = wire.EntryVerificationHold
)

// Count is how many entries match kind and id (wire.Count).
func Count(entries []Entry, kind, id string) int { return wire.Count(entries, kind, id) }

// Ledger returns a copy of every entry so far, oldest first. Holds past
// their expiry are released first, so the ledger is as of Config.Now.
func (s *Server) Ledger() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	s.saveLocked()
	return slices.Clone(s.st.Ledger)
}

// Count is how many ledger entries match kind and id (see Entry.Matches):
// Count(EntryCharge, operationID) is 1 for a charged payment, however often
// the operation was sent.
func (s *Server) Count(kind, id string) int {
	return Count(s.Ledger(), kind, id)
}

// recordLocked appends an entry, numbered and stamped.
func (s *Server) recordLocked(e Entry) {
	e.Seq = int64(len(s.st.Ledger)) + 1
	e.At = s.now()
	s.st.Ledger = append(s.st.Ledger, e)
}

// getLedger answers GET /v1/ledger[?kind=…&id=…] for tests in another
// process. It needs the key, but no fault ever touches it: it is the
// measuring stick.
func (s *Server) getLedger(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeAnswer(w, errAnswer(http.StatusUnauthorized, "unauthorized", "a valid bearer key is required"))
		return
	}
	q := r.URL.Query()
	kind, id := q.Get("kind"), q.Get("id")
	// from and to (RFC 3339) bound the entries' times: [from, to).
	var from, to time.Time
	for _, b := range []struct {
		name string
		into *time.Time
	}{{"from", &from}, {"to", &to}} {
		if v := q.Get(b.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				writeAnswer(w, errAnswer(http.StatusBadRequest, "validation_error", b.name+" must be an RFC 3339 time"))
				return
			}
			*b.into = t
		}
	}
	// after (a seq) and limit page through the entries in seq order: an
	// answer with has_more is followed by the one after its last entry.
	after, err := strconv.ParseInt(cmp.Or(q.Get("after"), "0"), 10, 64)
	if err != nil || after < 0 {
		writeAnswer(w, errAnswer(http.StatusBadRequest, "validation_error", "after must be an entry's seq"))
		return
	}
	limit, err := strconv.Atoi(cmp.Or(q.Get("limit"), "0"))
	if err != nil || limit < 0 || limit > wire.MaxLedgerPage {
		writeAnswer(w, errAnswer(http.StatusBadRequest, "validation_error",
			fmt.Sprintf("limit must be from 1 to %d (0 or none: every entry)", wire.MaxLedgerPage)))
		return
	}
	v := wire.LedgerView{Entries: []Entry{}}
	v.HasMore = s.eachEntry(after, func(e Entry) bool {
		if e.Matches(kind, id) && (from.IsZero() || !e.At.Before(from)) && (to.IsZero() || e.At.Before(to)) {
			v.Entries = append(v.Entries, e)
		}
		return limit == 0 || len(v.Entries) < limit
	})
	writeAnswer(w, jsonAnswer(http.StatusOK, v, ref{}))
}

// eachEntry calls fn with the entries after seq after, in seq order, while
// it answers true, and reports whether entries were left. The first page
// (after 0) releases the holds past their expiry first, as Ledger does.
func (s *Server) eachEntry(after int64, fn func(Entry) bool) (more bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if after == 0 {
		s.sweepLocked()
		s.saveLocked()
	}
	for i := after; i < int64(len(s.st.Ledger)); i++ { // seq is the place + 1
		if !fn(s.st.Ledger[i]) {
			return i+1 < int64(len(s.st.Ledger))
		}
	}
	return false
}

// PlantMany appends entries to the ledger at once, as POST /v1/ledger
// does one at a time (each at its own at, or now): the benchmark's way to
// give the sandbox a day of a million movements.
func (s *Server) PlantMany(entries []Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		at := e.At
		e.CardMask = ""
		s.recordLocked(e)
		if !at.IsZero() {
			s.st.Ledger[len(s.st.Ledger)-1].At = at
		}
	}
	s.saveLocked()
}

// plantLedger answers POST /v1/ledger: a sandbox-only way to write an
// entry behind Paygate's back (a charge it never asked for, a duplicate,
// another amount), so that reconciliation can be tried on every kind of
// break (docs/design/decisions.md section 18). The entry's seq is the
// ledger's; its time is the body's (at), or now.
func (s *Server) plantLedger(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeAnswer(w, errAnswer(http.StatusUnauthorized, "unauthorized", "a valid bearer key is required"))
		return
	}
	var e Entry
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&e); err != nil || e.Kind == "" ||
		e.Currency == "" || e.AmountMinor < 0 {
		writeAnswer(w, errAnswer(http.StatusBadRequest, "validation_error", "an entry needs kind, amount_minor and currency"))
		return
	}
	e.CardMask = ""
	s.mu.Lock()
	at := e.At
	s.recordLocked(e)
	if !at.IsZero() {
		s.st.Ledger[len(s.st.Ledger)-1].At = at
	}
	planted := s.st.Ledger[len(s.st.Ledger)-1]
	s.saveLocked()
	s.mu.Unlock()
	writeAnswer(w, jsonAnswer(http.StatusCreated, planted, ref{}))
}
