package money

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSum(t *testing.T) {
	// hi·2³² + lo as a database's truncating division and remainder split
	// an amount, negatives included.
	for _, a := range []int64{0, 1, -1, 4294967295, 4294967296, -4294967297, math.MaxInt64, math.MinInt64} {
		require.Equal(t, SumOf(a), SumOfParts(a/4294967296, a%4294967296), "%d", a)
	}
	two := SumOf(math.MaxInt64, math.MaxInt64)
	require.Equal(t, Sum("18446744073709551614"), two)
	require.Equal(t, SumOf(), Sum("0"))
	require.Equal(t, "0", Sum("").String())
	require.Equal(t, two, SumOf(math.MaxInt64).Add(math.MaxInt64))

	b, err := json.Marshal(map[string]Sum{"s": two})
	require.NoError(t, err)
	require.JSONEq(t, `{"s":18446744073709551614}`, string(b))
	var back map[string]Sum
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, two, back["s"])
	require.Error(t, json.Unmarshal([]byte(`{"s":1.5}`), &back))

	require.Equal(t, "USD 184467440737095516.14", FormatSum(two, "USD"))
	require.Equal(t, "USD -0.05", FormatSum(SumOf(-5), "USD"))
	require.Equal(t, Format(math.MinInt64, "KWD"), FormatSum(SumOf(math.MinInt64), "KWD"))
}
