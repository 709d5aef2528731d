package server

// cabinetActivity adapts the store and the domain services to what the cabinet's
// verifications and payouts pages read and change (docs/cabinet.md).
type cabinetActivity struct{ s *Server }
