package sim

import (
	"strings"
	"testing"
)

func TestClosestName(t *testing.T) {
	known := []string{"fleet", "kvcr", "workload", "scale_in"}
	for _, tc := range []struct{ key, want string }{
		{"fleet", "fleet"},
		{"flet", "fleet"},
		{"kvrc", "kvcr"},
		{"wrkload", "workload"},
		{"router", ""},                          // no known name within 2 edits
		{strings.Repeat("fleet", 13), ""},       // 65 bytes: no typo, never compared
		{"fleet" + strings.Repeat("x", 60), ""}, // long and far: the guard answers at once
	} {
		if got := ClosestName(tc.key, known); got != tc.want {
			t.Errorf("ClosestName(%.20q…) = %q, want %q", tc.key, got, tc.want)
		}
	}
}
