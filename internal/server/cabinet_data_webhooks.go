package server

// cabinetWebhooks adapts the store and the domain services to what the cabinet's
// webhook endpoints and the event log pages read and change (docs/cabinet.md).
type cabinetWebhooks struct{ s *Server }
