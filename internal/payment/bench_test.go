package payment

import "testing"

// BenchmarkCanMove asks the transition table about every pair of statuses
// (169 questions an iteration).
func BenchmarkCanMove(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, from := range Statuses {
			for _, to := range Statuses {
				if CanMove(from, to) {
					n++
				}
			}
		}
		if n == 0 {
			b.Fatal("no transitions")
		}
	}
}

// BenchmarkFinal asks every status whether it is final.
func BenchmarkFinal(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, s := range Statuses {
			if s.Final() {
				n++
			}
		}
		if n == 0 {
			b.Fatal("no final status")
		}
	}
}
