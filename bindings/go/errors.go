package semroute

import (
	"errors"
	"fmt"
)

// Code is the stable numeric error code of the C API.
type Code int

// The C API's codes (semroute_code); never renumbered.
const (
	CodeInvalidArgument Code = 1
	CodeNotFound        Code = 2
	CodeInvalidModel    Code = 3
	CodeUnsupported     Code = 4
	CodeInvalidUTF8     Code = 5
	CodeTooLong         Code = 6
	CodeOutOfMemory     Code = 7
	CodeInternal        Code = 8
)

var codeNames = map[Code]string{
	CodeInvalidArgument: "invalid_argument",
	CodeNotFound:        "not_found",
	CodeInvalidModel:    "invalid_model",
	CodeUnsupported:     "unsupported",
	CodeInvalidUTF8:     "invalid_utf8",
	CodeTooLong:         "too_long",
	CodeOutOfMemory:     "out_of_memory",
	CodeInternal:        "internal",
}

func (c Code) String() string {
	if name, ok := codeNames[c]; ok {
		return name
	}
	return fmt.Sprintf("code(%d)", int(c))
}

// Error is a failure reported by the library, with its code and message.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "semroute: " + e.Code.String()
	}
	return "semroute: " + e.Code.String() + ": " + e.Message
}

// Is makes errors.Is(err, ErrInvalidUTF8) and the like match on the code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels for errors.Is, one per code.
var (
	ErrInvalidArgument = &Error{Code: CodeInvalidArgument}
	ErrNotFound        = &Error{Code: CodeNotFound}
	ErrInvalidModel    = &Error{Code: CodeInvalidModel}
	ErrUnsupported     = &Error{Code: CodeUnsupported}
	ErrInvalidUTF8     = &Error{Code: CodeInvalidUTF8}
	ErrTooLong         = &Error{Code: CodeTooLong}
	ErrOutOfMemory     = &Error{Code: CodeOutOfMemory}
	ErrInternal        = &Error{Code: CodeInternal}
)

// ErrClosed is returned by calls on a Model after Close.
var ErrClosed = errors.New("semroute: model is closed")

// ErrUnavailable is returned by every call in a build without cgo.
var ErrUnavailable = errors.New("semroute: built without cgo, the native library is unavailable")
