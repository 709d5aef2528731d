package server

// cabinetCards adapts the store and the domain services to what the cabinet's
// saved cards pages read and change (docs/cabinet.md).
type cabinetCards struct{ s *Server }
