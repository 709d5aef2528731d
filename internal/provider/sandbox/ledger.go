package sandbox

import (
	"net/http"
	"slices"
	"time"
)

// The kinds of ledger entries.
const (
	EntryCharge           = "charge"            // money taken at once
	EntryHold             = "hold"              // money held by an authorization
	EntryCapture          = "capture"           // held money taken
	EntryRelease          = "release"           // held money let go (cancel, partial capture, expiry, end of a verification)
	EntryRefund           = "refund"            // taken money given back
	EntryTransfer         = "transfer"          // money sent by a payout
	EntryVerificationHold = "verification_hold" // the small sum a card verification blocks
)

// Entry is one movement of money at the sandbox. It holds a masked card at
// most, never a card number.
type Entry struct {
	Seq  int64  `json:"seq"`
	Kind string `json:"kind"`
	// OperationID is the operation that created the resource (Paygate's
	// operation id of the payment, payout or verification).
	OperationID string `json:"operation_id"`
	// CausedBy is the operation whose request made this entry (a capture's
	// own operation id, say); empty when the payer (a page) or the clock
	// (an expiry) did.
	CausedBy    string    `json:"caused_by,omitempty"`
	ResourceID  string    `json:"resource_id"` // the sandbox's payment, payout or verification id
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	CardMask    string    `json:"card_mask,omitempty"`
	Reason      string    `json:"reason,omitempty"` // why a release: canceled, partial_capture, expired, verified, failed
	At          time.Time `json:"at"`
}

// Matches reports whether e is of kind (any kind when empty) and concerns
// id: its OperationID, CausedBy or ResourceID.
func (e Entry) Matches(kind, id string) bool {
	if kind != "" && e.Kind != kind {
		return false
	}
	return id == "" || e.OperationID == id || e.CausedBy == id || e.ResourceID == id
}

// Count is how many entries match kind and id (see Entry.Matches), for a
// ledger read over HTTP (Adapter.Ledger) as for Server.Ledger.
func Count(entries []Entry, kind, id string) int {
	n := 0
	for _, e := range entries {
		if e.Matches(kind, id) {
			n++
		}
	}
	return n
}

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
	v := ledgerView{Entries: []Entry{}}
	for _, e := range s.Ledger() {
		if e.Matches(kind, id) {
			v.Entries = append(v.Entries, e)
		}
	}
	writeAnswer(w, jsonAnswer(http.StatusOK, v, ref{}))
}
