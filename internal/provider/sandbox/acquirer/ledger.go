package acquirer

import (
	"net/http"
	"slices"

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
	kind, id := r.URL.Query().Get("kind"), r.URL.Query().Get("id")
	v := wire.LedgerView{Entries: []Entry{}}
	for _, e := range s.Ledger() {
		if e.Matches(kind, id) {
			v.Entries = append(v.Entries, e)
		}
	}
	writeAnswer(w, jsonAnswer(http.StatusOK, v, ref{}))
}
