//go:build cgo

package semroute

// #include <semroute/semroute.h>
import "C"

// nativeCodeName is the library's name for a code ("unknown" for none), so a
// test can check the Go table against the C one.
func nativeCodeName(c Code) string {
	return C.GoString(C.semroute_code_name(C.semroute_code(c)))
}
