package main

import "testing"

// TestCabinetPageSmall runs the cabinet-page check with 20,000 payments on
// both databases: the seeding, the sign-in, every filter's rows and the
// chart's total.
func TestCabinetPageSmall(t *testing.T) {
	databases(t, func(t *testing.T, db string) {
		runSmall(t, "cabinet-page", checkConfig{db: db, n: 20000})
	})
}
