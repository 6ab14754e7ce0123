// Package codeoid wraps the codeoid C ABI (include/codeoid.h) for Go through cgo: session memory
// for AI coding agents, where the context window is a cache and the session history a database.
//
// Linking (link.go): by default the package links the installed library, `-lcodeoid` with the
// header codeoid.h, from wherever the C compiler looks (/usr/local/include and /usr/local/lib, or
// a prefix named by CGO_CFLAGS=-I<prefix>/include and CGO_LDFLAGS=-L<prefix>/lib); `make
// install-ffi` installs it. Inside the repository, the build tag `codeoid_repo` (link_repo.go)
// links the checkout's own static library instead, made by `make ffi-static`. Go's build cache
// does not notice a rebuilt libcodeoid.a: `make test-go` keys the cache on the library's mtime and
// size; by hand, run `go clean -cache` after rebuilding the library.
//
// Conventions:
//   - A Memory is a handle to an open store bound to one workspace. It is safe for concurrent use
//     by many goroutines. Close it when done; Close is idempotent, a call on a closed Memory
//     returns ErrClosed, and a finalizer frees a forgotten handle only as a backstop.
//   - Errors are values: *Error carries a stable Code (see docs/errors.md) and the full message.
//     Codes double as sentinel errors, so errors.Is(err, codeoid.ErrNotFound) works.
//   - Nested data crosses the C boundary as JSON and is decoded into the Go types of types.go.
package codeoid

/*
#include <stdlib.h>
#include "codeoid.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// HeaderABIVersion is the ABI version of the header this package was compiled against.
const HeaderABIVersion = uint32(C.CODEOID_ABI_VERSION)

// ABIVersion is the ABI version of the linked library, encoded as (major<<16)|(minor<<8)|patch.
func ABIVersion() uint32 { return uint32(C.codeoid_abi_version()) }

// Version is the linked library's version string ("0.1.0").
func Version() string { return C.GoString(C.codeoid_version()) }

// emptyByte gives empty strings a non-NULL address: codeoid reads NULL as "argument missing"
// (or "not given" for optional arguments), never as the empty string.
var emptyByte byte

// text passes s to C as (pointer, length) without copying. Valid only during the call: codeoid
// never keeps a pointer to its arguments.
func text(s string) (*C.char, C.size_t) {
	if len(s) == 0 {
		return (*C.char)(unsafe.Pointer(&emptyByte)), 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s))
}

// optionalText is text, except that "" is passed as NULL ("not given").
func optionalText(s string) (*C.char, C.size_t) {
	if len(s) == 0 {
		return nil, 0
	}
	return text(s)
}

// rawBytes passes b to C as (pointer, length), never NULL.
func rawBytes(b []byte) (*C.char, C.size_t) {
	if len(b) == 0 {
		return (*C.char)(unsafe.Pointer(&emptyByte)), 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.SliceData(b))), C.size_t(len(b))
}

// optionalJSON encodes v as JSON text, or "" (NULL) for nil. Text that is not UTF-8 and Part
// fields of another type are refused first (checkValue): encoding/json would change or drop them.
func optionalJSON(v any) (string, error) {
	if v == nil {
		return "", nil
	}
	if err := checkValue(v, strings.ReplaceAll(reflect.TypeOf(v).String(), "codeoid.", "")); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("codeoid: cannot encode %T as JSON: %w", v, err)
	}
	return string(b), nil
}

// takeBytes copies an owned codeoid_string into Go memory and frees it.
func takeBytes(s *C.codeoid_string) []byte {
	defer C.codeoid_string_free(s)
	if s.ptr == nil {
		return nil
	}
	// A copy through a slice rather than C.GoBytes, whose C.int length would cut blobs at 2 GiB.
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(s.ptr)), int(s.len))...)
}

// takeString copies an owned codeoid_string into a Go string and frees it.
func takeString(s *C.codeoid_string) string {
	defer C.codeoid_string_free(s)
	if s.ptr == nil {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(s.ptr)), int(s.len)))
}

// decodeOut takes the JSON in s and decodes it into out.
func decodeOut(s *C.codeoid_string, out any) error {
	raw := takeString(s)
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		return fmt.Errorf("codeoid: unexpected JSON from the library: %w", err)
	}
	return nil
}
