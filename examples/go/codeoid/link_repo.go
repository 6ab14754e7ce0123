//go:build codeoid_repo

package codeoid

// With the build tag codeoid_repo, the header and library come from this repository checkout:
// include/codeoid.h and target/ffi/debug/libcodeoid.a, the static library `make ffi-static`
// makes from the dev build (with only the codeoid_* symbols global). The search paths below come
// first, so the checkout's library wins over an installed one; link.go still names the library.
// `make test-go` builds with this tag.

/*
#cgo CFLAGS: -I${SRCDIR}/../../../include
#cgo LDFLAGS: -L${SRCDIR}/../../../target/ffi/debug
*/
import "C"
