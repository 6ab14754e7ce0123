package codeoid

// How the package links the C library, for an installed codeoid: the header and libcodeoid from
// the compiler's search paths (add a prefix with CGO_CFLAGS=-I<prefix>/include and
// CGO_LDFLAGS=-L<prefix>/lib). With libcodeoid.so there it links the shared library; with only
// libcodeoid.a, the static one, which needs the system libraries below (what Rust's standard
// library uses; harmless for the shared one). link_repo.go adds the repository's own build.

/*
#cgo LDFLAGS: -lcodeoid
#cgo linux LDFLAGS: -lgcc_s -lutil -lrt -lpthread -lm -ldl
*/
import "C"
