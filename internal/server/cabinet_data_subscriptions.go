package server

// cabinetSubscriptions adapts the store and the domain services to what the cabinet's
// subscriptions pages read and change (docs/cabinet.md).
type cabinetSubscriptions struct{ s *Server }
