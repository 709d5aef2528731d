package openapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The allowances' wire types are checked against their schemas with the
// others (TestWireTypesMatchSchemas, TestResponsesCarryNoWriteOnlyData).
func init() {
	wirePairs = append(wirePairs, wirePair{Limit{}, "Limit", false}, wirePair{LimitList{}, "LimitList", false})
	responseRoots = append(responseRoots, LimitList{})
	extensions = append(extensions, "GET /api/v1/limits") // docs/design/decisions.md section 12
}

// TestLimitListValidates: an answer of listLimits (GET /limits), unset limits
// as null, validates against its schema.
func TestLimitListValidates(t *testing.T) {
	c, _, err := newCompiler()
	require.NoError(t, err)
	daily, left := int64(1000), int64(250)
	v := LimitList{Items: []Limit{
		{Allowance: "collection", Currency: "USD", DailyMinor: &daily, UsedMinor: 500, ReservedMinor: 250,
			RemainingMinor: &left, ResetsAt: Time(time.Date(2031, 5, 7, 0, 0, 0, 0, time.UTC))},
	}}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.Contains(t, string(b), `"per_transaction_minor":null`)
	var inst any
	require.NoError(t, json.Unmarshal(b, &inst))
	sch, err := c.Compile(schemaURL("LimitList"))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst), string(b))
}
