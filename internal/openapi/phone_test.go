package openapi

import (
	"regexp"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/payment"
	"github.com/stretchr/testify/require"
)

// TestPhonePatternMatchesDomain: the schema's mobile.phone pattern accepts
// exactly what payment.NormalizePhone accepts, so moving the rule into the
// document refuses nothing that was accepted and accepts nothing that was
// refused (docs/api.md, "What the document promises generated clients").
func TestPhonePatternMatchesDomain(t *testing.T) {
	doc := loadDoc(t)
	s, ok := resolve(doc, "#/components/schemas/MobileAccount/properties/phone/pattern")
	require.True(t, ok)
	re := regexp.MustCompile(s.(string))
	samples := []string{
		"+12025550100", "+1 (202) 555-0100", " +1 202 555 0100 ", "(+44) 20-7946-0958", "+380441234567",
		"+123456789012345", "+1234567890123456", "+1234567", "+12345678", "+02025550100", "12025550100",
		"++12025550100", "+1202555010a", "+1\t2025550100", "+1.202.555.0100", "", "+", " - ( ) ",
		"+1-2-3-4-5-6-7-8", "+1--------2345678", "+１２０２５５５０１００", "+1202555010０", "+12025550100\n",
	}
	// Every string of up to 4 characters over a small alphabet, padded to
	// the digit counts that matter.
	alphabet := []string{"+", "1", "0", " ", "-", "(", ")", "x"}
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		samples = append(samples, prefix, prefix+"2025550100", "+1"+prefix+"2345678", "+12345678901234"+prefix)
		if n == 0 {
			return
		}
		for _, a := range alphabet {
			grow(prefix+a, n-1)
		}
	}
	grow("", 4)
	for _, s := range samples {
		_, want := payment.NormalizePhone(s)
		require.Equal(t, want, re.MatchString(s), "%q", strings.ReplaceAll(s, "\n", `\n`))
	}
}
