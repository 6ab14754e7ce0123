/*
 * A program that uses its own SQLite and codeoid at once, as a harness with a database of its own
 * does. libcodeoid.a bundles a SQLite too; `make ffi-static` makes an archive whose only global
 * symbols are the codeoid_* functions, so the two copies cannot collide. `make test-c` links this
 * program twice against that archive: with the system's shared libsqlite3, and with the system's
 * whole static libsqlite3.a compiled in (as Go's mattn/go-sqlite3 compiles in its amalgamation).
 * With Cargo's own libcodeoid.a the second link fails with "multiple definition of sqlite3_...",
 * and in the first the program's sqlite3_* calls silently reach codeoid's copy.
 *
 * Checks: the program's sqlite3_* calls reach the system SQLite (its version is the one of the
 * system header), which stores and reads data; codeoid records and recalls through its own copy.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeoid.h"

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "sqlite_alongside: %s: %s\n", what, detail ? detail : "");
  exit(1);
}

static void check_codeoid(codeoid_error *err, const char *what) {
  if (err != NULL) {
    fprintf(stderr, "sqlite_alongside: %s: %s: %s\n", what,
            codeoid_error_code_name(codeoid_error_code(err)), codeoid_error_message(err));
    codeoid_error_free(err);
    exit(1);
  }
}

/* The program's own SQLite: the system library, with the version its header announces. */
static void use_system_sqlite(void) {
  if (sqlite3_libversion_number() != SQLITE_VERSION_NUMBER ||
      strcmp(sqlite3_libversion(), SQLITE_VERSION) != 0) {
    fprintf(stderr, "sqlite_alongside: sqlite3_libversion() is %s, the system header says %s\n",
            sqlite3_libversion(), SQLITE_VERSION);
    exit(1);
  }
  sqlite3 *db = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) fail("sqlite3_open", sqlite3_errmsg(db));
  char *message = NULL;
  if (sqlite3_exec(db, "CREATE TABLE t(x TEXT); INSERT INTO t VALUES ('mine');", NULL, NULL,
                   &message) != SQLITE_OK) {
    fail("sqlite3_exec", message);
  }
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &stmt, NULL) != SQLITE_OK ||
      sqlite3_step(stmt) != SQLITE_ROW ||
      strcmp((const char *)sqlite3_column_text(stmt, 0), "mine") != 0) {
    fail("the program's own table", sqlite3_errmsg(db));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

/* codeoid, on its own bundled SQLite (FTS5 included): record a turn, find it again. */
static void use_codeoid(void) {
  const char *config = "{\"db_path\": \":memory:\", \"embeddings\": {\"enabled\": false}}";
  codeoid_memory *memory = NULL;
  check_codeoid(codeoid_memory_open(config, strlen(config), &memory), "open");
  codeoid_string session = {0};
  check_codeoid(codeoid_memory_start_session(memory, "{\"id\": \"ses_side\"}", 18, &session),
                "start session");
  codeoid_string_free(&session);
  const char *turns[] = {
      "{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"why is the parser "
      "test flaky?\"}]}",
      "{\"role\": \"assistant\", \"parts\": [{\"type\": \"tool_call\", \"id\": \"c1\", \"name\": "
      "\"Bash\", \"input\": {\"command\": \"cargo test parser\"}}]}",
      "{\"role\": \"user\", \"parts\": [{\"type\": \"tool_result\", \"call_id\": \"c1\", "
      "\"parts\": [{\"type\": \"text\", \"text\": \"test parser::flaky_tokens ... FAILED\"}]}]}",
  };
  for (size_t i = 0; i < sizeof turns / sizeof turns[0]; i++) {
    codeoid_string outcome = {0};
    check_codeoid(
        codeoid_memory_record_turn(memory, "ses_side", 8, turns[i], strlen(turns[i]), &outcome),
        "record turn");
    codeoid_string_free(&outcome);
  }
  codeoid_string hits = {0};
  check_codeoid(codeoid_memory_recall(memory, NULL, 0, "flaky_tokens", 12, NULL, 0, &hits),
                "recall");
  if (strstr(hits.ptr, "flaky_tokens") == NULL) fail("recall found nothing", hits.ptr);
  codeoid_string_free(&hits);
  codeoid_memory_free(memory);
}

int main(void) {
  use_system_sqlite();
  use_codeoid();
  use_system_sqlite();
  printf("sqlite_alongside: system SQLite %s and codeoid %s in one program\n", sqlite3_libversion(),
         codeoid_version());
  return 0;
}
