//go:build cgo

package semroute

import "testing"

// The Go code table is a copy of the C header's; it must equal the library's,
// code for code and name for name, and miss none of them.
func TestCodesEqualTheLibrarys(t *testing.T) {
	for c, name := range codeNames {
		if got := nativeCodeName(c); got != name {
			t.Errorf("code %d: Go says %q, the library %q", int(c), name, got)
		}
	}
	for c := Code(1); c < 64; c++ {
		if name := nativeCodeName(c); name != "unknown" {
			if _, ok := codeNames[c]; !ok {
				t.Errorf("the library's code %d (%s) has no Go constant", int(c), name)
			}
		}
	}
}
