package instrument

import "testing"

func TestCheckReturnURL(t *testing.T) {
	for _, tc := range []struct {
		url                 string
		sandbox, production bool // accepted in the sandbox, in production
	}{
		{"", true, true},
		{"https://shop.example/return", true, true},
		{"https://shop.example:8443/r?x=1#top", true, true},
		{"HTTPS://shop.example/", true, true},
		{"http://localhost:3000/return", true, false},
		{"http://", false, false},
		{"https://", false, false},
		{"https:evil.example", false, false},
		{"https:/evil.example", false, false},
		{"//evil.example/x", false, false},
		{"/relative", false, false},
		{"javascript:alert(1)", false, false},
		{"JavaScript://shop.example/%0aalert(1)", false, false},
		{"data:text/html,<script>alert(1)</script>", false, false},
		{"vbscript:msgbox(1)", false, false},
		{"ftp://shop.example/", false, false},
		{"https://user:pass@shop.example/", false, false},
		{"https://:443/", false, false},
		{"https://shop.example/\x00", false, false},
	} {
		for _, sandbox := range []bool{true, false} {
			want := tc.production
			if sandbox {
				want = tc.sandbox
			}
			f := CheckReturnURL(tc.url, sandbox)
			if (f == nil) != want {
				t.Errorf("CheckReturnURL(%q, sandbox=%v) = %v, want accepted=%v", tc.url, sandbox, f, want)
			}
			if f != nil && (f.Field != "return_url" || f.Code != "validation_error") {
				t.Errorf("CheckReturnURL(%q): %s on %q", tc.url, f.Code, f.Field)
			}
		}
	}
}
