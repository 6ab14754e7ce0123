//go:build codeoid_repo

// Package sqlitealongside links the system's static SQLite into a Go program next to codeoid, as
// a program that imports github.com/mattn/go-sqlite3 does (that package compiles SQLite's
// amalgamation in). codeoid bundles a SQLite of its own; the test proves that the two link into
// one binary and that each call reaches its own copy, which holds because the libcodeoid.a of
// `make ffi-static` keeps only the codeoid_* symbols global (with Cargo's own archive the test
// binary fails to link: "multiple definition of sqlite3_mutex_free"). Built with the codeoid_repo
// tag only (`make test-go`), since it needs the system's static libsqlite3.a (libsqlite3-dev).
package sqlitealongside

/*
#cgo LDFLAGS: -l:libsqlite3.a -lm -ldl -lpthread
#include <stdlib.h>
#include <sqlite3.h>

// Creates a table in a fresh in-memory database, reads the row back and returns it (owned by
// the caller), or NULL.
static char *round_trip(void) {
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	char *out = NULL;
	if (sqlite3_open(":memory:", &db) == SQLITE_OK &&
	    sqlite3_exec(db, "CREATE TABLE t(x TEXT); INSERT INTO t VALUES ('mine');", NULL, NULL, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &stmt, NULL) == SQLITE_OK &&
	    sqlite3_step(stmt) == SQLITE_ROW) {
		out = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(stmt, 0));
	}
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return out;
}
*/
import "C"

import "unsafe"

// HeaderVersion is the version of the system's sqlite3.h.
const HeaderVersion = C.SQLITE_VERSION

// LibVersion is the version of the SQLite this package's calls reach.
func LibVersion() string { return C.GoString(C.sqlite3_libversion()) }

// RoundTrip stores a row in an in-memory database of that SQLite and returns what it reads back.
func RoundTrip() string {
	out := C.round_trip()
	if out == nil {
		return ""
	}
	defer C.sqlite3_free(unsafe.Pointer(out))
	return C.GoString(out)
}
