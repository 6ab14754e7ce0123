package codeoid

/*
#include "codeoid.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Code is a stable error code (docs/errors.md). Codes are never reused. A Code is also an error
// value, so each code is its own sentinel: errors.Is(err, codeoid.ErrNotFound).
type Code uint32

// The codes of the core's error kinds (1..999) and of the C ABI (1000 and up).
const (
	CodeInvalidInput     Code = C.CODEOID_ERROR_INVALID_INPUT
	CodeNotFound         Code = C.CODEOID_ERROR_NOT_FOUND
	CodeAlreadyExists    Code = C.CODEOID_ERROR_ALREADY_EXISTS
	CodeDatabase         Code = C.CODEOID_ERROR_DATABASE
	CodeBusy             Code = C.CODEOID_ERROR_BUSY
	CodeCorrupt          Code = C.CODEOID_ERROR_CORRUPT
	CodeSchemaTooNew     Code = C.CODEOID_ERROR_SCHEMA_TOO_NEW
	CodeIO               Code = C.CODEOID_ERROR_IO
	CodeModelUnavailable Code = C.CODEOID_ERROR_MODEL_UNAVAILABLE
	CodeModel            Code = C.CODEOID_ERROR_MODEL
	CodeTranslation      Code = C.CODEOID_ERROR_TRANSLATION
	CodeImport           Code = C.CODEOID_ERROR_IMPORT
	CodeRotationRefused  Code = C.CODEOID_ERROR_ROTATION_REFUSED
	CodeInternal         Code = C.CODEOID_ERROR_INTERNAL
	CodeNullArgument     Code = C.CODEOID_ERROR_NULL_ARGUMENT
	CodeInvalidUTF8      Code = C.CODEOID_ERROR_INVALID_UTF8
	CodePanic            Code = C.CODEOID_ERROR_PANIC
	CodeCancelled        Code = C.CODEOID_ERROR_CANCELLED
)

// AllCodes lists every code, core kinds first.
var AllCodes = []Code{
	CodeInvalidInput, CodeNotFound, CodeAlreadyExists, CodeDatabase, CodeBusy, CodeCorrupt,
	CodeSchemaTooNew, CodeIO, CodeModelUnavailable, CodeModel, CodeTranslation, CodeImport,
	CodeRotationRefused, CodeInternal, CodeNullArgument, CodeInvalidUTF8, CodePanic, CodeCancelled,
}

// Sentinel errors, one per code, for errors.Is.
var (
	ErrInvalidInput     error = CodeInvalidInput
	ErrNotFound         error = CodeNotFound
	ErrAlreadyExists    error = CodeAlreadyExists
	ErrDatabase         error = CodeDatabase
	ErrBusy             error = CodeBusy
	ErrCorrupt          error = CodeCorrupt
	ErrSchemaTooNew     error = CodeSchemaTooNew
	ErrIO               error = CodeIO
	ErrModelUnavailable error = CodeModelUnavailable
	ErrModel            error = CodeModel
	ErrTranslation      error = CodeTranslation
	ErrImport           error = CodeImport
	ErrRotationRefused  error = CodeRotationRefused
	ErrInternal         error = CodeInternal
	ErrNullArgument     error = CodeNullArgument
	ErrInvalidUTF8      error = CodeInvalidUTF8
	ErrPanic            error = CodePanic
	// ErrCancelled is the C ABI's code for a call whose cancel flag was raised before it began.
	// The Context methods never return it: they return the context's error instead.
	ErrCancelled error = CodeCancelled
)

// ErrClosed is returned by calls on a Memory after Close. It exists only in Go and has no code.
var ErrClosed = errors.New("codeoid: memory is closed")

// Name is the snake_case name of the code ("not_found"), or "" for a number that is not a code.
func (c Code) Name() string {
	name := C.codeoid_error_code_name(C.uint32_t(c))
	if name == nil {
		return ""
	}
	return C.GoString(name)
}

// Error makes a Code usable as a sentinel error.
func (c Code) Error() string {
	if name := c.Name(); name != "" {
		return "codeoid: " + name
	}
	return fmt.Sprintf("codeoid: error code %d", uint32(c))
}

// Error is an error reported by the library: a stable code and the full message.
type Error struct {
	code    Code
	message string
}

// Code is the stable numeric code; branch on it (or use errors.Is), never on the message.
func (e *Error) Code() Code { return e.code }

// Message is the library's message: what went wrong and a hint, with every cause.
func (e *Error) Message() string { return e.message }

// Error formats the error as "codeoid: <name>: <message>".
func (e *Error) Error() string { return e.code.Error() + ": " + e.message }

// Is reports whether target is this error's Code, so errors.Is(err, codeoid.ErrNotFound) works.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.code
}

// As sets a *Code target to this error's code, so errors.As(err, &code) works as errors.Is does.
func (e *Error) As(target any) bool {
	code, ok := target.(*Code)
	if ok {
		*code = e.code
	}
	return ok
}

// takeError converts an owned codeoid_error into a Go error (nil for NULL) and frees it.
func takeError(err *C.codeoid_error) error {
	if err == nil {
		return nil
	}
	defer C.codeoid_error_free(err)
	return &Error{
		code:    Code(C.codeoid_error_code(err)),
		message: C.GoString(C.codeoid_error_message(err)),
	}
}
