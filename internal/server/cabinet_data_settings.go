package server

// cabinetSettings adapts the store and the domain services to what the cabinet's
// allowances and channels pages read and change (docs/cabinet.md).
type cabinetSettings struct{ s *Server }
