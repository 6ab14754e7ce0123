/*
 * codeoid quickstart in C: open a store, record a session's turns, read memory back, recall and
 * call the memory tools by name as a model would, build the workspace index, ask for a rotation
 * decision and rotate, take the seed, compress a command's output, fork the session to another
 * backend, translate turns, and handle errors.
 *
 * Recall here is lexical: the store is opened with "embeddings": {"enabled": false}, so no model
 * is looked for or downloaded and no embedding worker thread runs (recall ranks by BM25, recency
 * and paths; the vector component is 0). With a model, pass "embeddings": {"model_dir": "..."}
 * and call codeoid_memory_flush before a recall that must see the newest episodes by meaning;
 * codeoid_memory_free joins the worker thread.
 *
 * Every step checks its result and the program exits non-zero on the first surprise, so it is
 * also a test: `make test-c` runs it plainly, under AddressSanitizer and under valgrind.
 *
 * Build (after `make ffi-static`, which makes the static library with only codeoid_* global):
 *   cc -std=c11 -Wall -Wextra -Werror -Iinclude examples/c/quickstart.c \
 *      target/ffi/debug/libcodeoid.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -o quickstart
 */
#define _XOPEN_SOURCE 700

#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codeoid.h"

static int failures = 0;

/* Prints a failed expectation and remembers it. */
static void fail(const char *what, ...) {
  va_list args;
  va_start(args, what);
  fprintf(stderr, "FAIL: ");
  vfprintf(stderr, what, args);
  fprintf(stderr, "\n");
  va_end(args);
  failures++;
}

/* Consumes `err`: true on success, otherwise prints the code and message and frees it. */
static bool ok(codeoid_error *err, const char *what) {
  if (err == NULL) {
    return true;
  }
  fail("%s: error %u (%s): %s", what, codeoid_error_code(err),
       codeoid_error_code_name(codeoid_error_code(err)), codeoid_error_message(err));
  codeoid_error_free(err);
  return false;
}

/* Passing C strings as (pointer, length) pairs. */
#define TEXT(s) (s), strlen(s)

/* Asserts that `haystack` (a codeoid_string) contains `needle`. */
static void expect_contains(const codeoid_string *s, const char *needle, const char *what) {
  if (s->ptr == NULL || strstr(s->ptr, needle) == NULL) {
    fail("%s: expected to find \"%s\" in: %s", what, needle, s->ptr ? s->ptr : "(null)");
  }
}

/* Copies the first `ep_...` id found in `json` into `out` (size `cap`). */
static bool first_episode_id(const char *json, char *out, size_t cap) {
  const char *start = strstr(json, "\"ep_");
  if (start == NULL) {
    return false;
  }
  start++;
  const char *end = strchr(start, '"');
  if (end == NULL || (size_t)(end - start) + 1 > cap) {
    return false;
  }
  size_t len = (size_t)(end - start);
  memcpy(out, start, len);
  out[len] = '\0';
  return true;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* One exchange of a coding session: prompt, a Read tool call, its result, the answer. */
static void record_exchange(const codeoid_memory *memory, const char *session, int n,
                            long input_tokens) {
  char turn[1024];
  codeoid_string out = {0};

  snprintf(turn, sizeof turn,
           "{\"id\":\"u%d\",\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":"
           "\"Why does migration %d fail in store/schema.rs?\"}]}",
           n, n);
  if (ok(codeoid_memory_record_turn(memory, TEXT(session), TEXT(turn), &out), "record prompt")) {
    codeoid_string_free(&out);
  }

  snprintf(turn, sizeof turn,
           "{\"id\":\"a%d\",\"role\":\"assistant\",\"provider\":\"anthropic\","
           "\"model\":\"claude-sonnet-4-5\",\"parts\":[{\"type\":\"text\",\"text\":\"Reading the "
           "schema.\"},{\"type\":\"tool_call\",\"id\":\"toolu_%d\",\"name\":\"Read\",\"input\":"
           "{\"file_path\":\"src/store/schema.rs\"}}],\"usage\":{\"calls\":[{\"input_tokens\":%ld,"
           "\"output_tokens\":90}]}}",
           n, n, input_tokens);
  if (ok(codeoid_memory_record_turn(memory, TEXT(session), TEXT(turn), &out), "record call")) {
    expect_contains(&out, "\"decision\":{\"should_rotate\":false", "decision on a call");
    codeoid_string_free(&out);
  }

  snprintf(turn, sizeof turn,
           "{\"id\":\"r%d\",\"role\":\"user\",\"parts\":[{\"type\":\"tool_result\",\"call_id\":"
           "\"toolu_%d\",\"parts\":[{\"type\":\"text\",\"text\":\"const SCHEMA_VERSION: u32 = "
           "%d;\"}]}]}",
           n, n, n);
  if (ok(codeoid_memory_record_turn(memory, TEXT(session), TEXT(turn), &out), "record result")) {
    expect_contains(&out, "\"episode_ids\":[\"ep_", "the result completes a tool call episode");
    codeoid_string_free(&out);
  }

  snprintf(turn, sizeof turn,
           "{\"id\":\"f%d\",\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":"
           "\"user_version is bumped before migration %d runs.\"}],\"model\":"
           "\"claude-sonnet-4-5\",\"usage\":{\"calls\":[{\"input_tokens\":%ld,"
           "\"output_tokens\":40}]}}",
           n, n, input_tokens + 400);
  if (ok(codeoid_memory_record_turn(memory, TEXT(session), TEXT(turn), &out), "record answer")) {
    codeoid_string_free(&out);
  }
}

int main(void) {
  /* 0. The header and the library agree. */
  if (codeoid_abi_version() != CODEOID_ABI_VERSION) {
    fail("header %u vs library %u (%s)", CODEOID_ABI_VERSION, codeoid_abi_version(),
         codeoid_version());
    return 1;
  }
  printf("codeoid %s\n", codeoid_version());

  /* 1. Open a store in a scratch directory, bound to a workspace directory, without an
   *    embedding model (lexical recall; see the top of this file). */
  char dir[] = "/tmp/codeoid-quickstart-XXXXXX";
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  char workspace[512];
  snprintf(workspace, sizeof workspace, "%s/project", dir);
  mkdir(workspace, 0700);
  char config[1024];
  snprintf(config, sizeof config,
           "{\"db_path\":\"%s/codeoid.db\",\"workspace_dir\":\"%s\","
           "\"embeddings\":{\"enabled\":false}}",
           dir, workspace);
  codeoid_memory *memory = NULL;
  if (!ok(codeoid_memory_open(TEXT(config), &memory), "open")) {
    return 1;
  }

  /* 2. A session and five exchanges of turns. */
  const char *session = "ses_quickstart";
  codeoid_string out = {0};
  if (ok(codeoid_memory_start_session(memory, TEXT("{\"id\":\"ses_quickstart\",\"name\":"
                                                   "\"schema bug\"}"),
                                      &out),
         "start session")) {
    expect_contains(&out, "\"name\":\"schema bug\"", "session name");
    codeoid_string_free(&out);
  }
  for (int n = 1; n <= 5; n++) {
    record_exchange(memory, session, n, 40000 + 10000 * n);
  }
  printf("recorded 20 turns\n");

  /* 3. Read memory back: the timeline, then one episode verbatim (what get_episode shows). */
  char episode_id[64] = {0};
  if (ok(codeoid_memory_timeline(memory, TEXT("{\"limit\":3}"), &out), "timeline")) {
    if (!first_episode_id(out.ptr, episode_id, sizeof episode_id)) {
      fail("no episode id in the timeline: %s", out.ptr);
    }
    expect_contains(&out, "\"next\":{\"offset\":", "a next page");
    codeoid_string_free(&out);
  }
  if (ok(codeoid_memory_timeline_text(memory, TEXT(session), NULL, 0, &out), "timeline text")) {
    expect_contains(&out, "current session", "timeline labels");
    codeoid_string_free(&out);
  }
  if (ok(codeoid_memory_episode_text(memory, TEXT(session), TEXT(episode_id), &out),
         "episode text")) {
    expect_contains(&out, "# Tool: Read", "episode content");
    printf("episode %s: %zu bytes\n", episode_id, out.len);
    codeoid_string_free(&out);
  }

  /* 4. Recall and the memory tools. A harness declares the tools (here for Anthropic) and hands
   *    every call the model makes of one of them to codeoid_memory_call_tool, by name. */
  if (ok(codeoid_memory_recall(memory, NULL, 0, TEXT("SCHEMA_VERSION"), TEXT("{\"limit\":2}"),
                               &out),
         "recall")) {
    expect_contains(&out, "\"tool_name\":\"Read\"", "recall hit");
    expect_contains(&out, "\"components\":{\"vec\":0.0,\"bm25\":", "lexical components");
    codeoid_string_free(&out);
  }
  bool is_error = true;
  if (ok(codeoid_memory_call_tool(memory, TEXT(session), TEXT("recall"),
                                  TEXT("{\"query\":\"migration 4\",\"include_current_session\":"
                                       "true,\"limit\":1}"),
                                  &out, &is_error),
         "call recall")) {
    if (is_error) {
      fail("recall tool failed: %s", out.ptr);
    }
    expect_contains(&out, "episode_id: ep_", "recall tool text");
    codeoid_string_free(&out);
  }
  char arguments[128];
  snprintf(arguments, sizeof arguments, "{\"episode_id\":\"%s\"}", episode_id);
  if (ok(codeoid_memory_call_tool(memory, TEXT(session), TEXT("codeoid_memory__get_episode"),
                                  TEXT(arguments), &out, &is_error),
         "call get_episode")) {
    if (is_error) {
      fail("get_episode tool failed: %s", out.ptr);
    }
    expect_contains(&out, "# Tool: Read", "get_episode text");
    printf("get_episode(%s) by name: %zu bytes\n", episode_id, out.len);
    codeoid_string_free(&out);
  }
  /* A failed tool call is a result for the model (is_error), not an error of the function. */
  if (ok(codeoid_memory_call_tool(memory, TEXT(session), TEXT("forget"), NULL, 0, &out,
                                  &is_error),
         "call an unknown tool")) {
    if (!is_error) {
      fail("an unknown tool is an error result");
    }
    printf("unknown tool, told to the model: %s\n", out.ptr);
    codeoid_string_free(&out);
  }
  codeoid_string schemas = {0};
  if (ok(codeoid_memory_tool_schemas(memory, TEXT("codeoid_memory"), &schemas), "tool schemas")) {
    if (ok(codeoid_translate_declare_tools(CODEOID_FORMAT_ANTHROPIC, schemas.ptr, schemas.len,
                                           NULL, 0, &out),
           "declare tools")) {
      expect_contains(&out, "\"name\":\"codeoid_memory__recall\"", "declared recall");
      expect_contains(&out, "\"input_schema\":", "anthropic shape");
      codeoid_string_free(&out);
    }
    codeoid_string_free(&schemas);
  }
  bool flushed = false;
  if (ok(codeoid_memory_flush(memory, -1, &flushed), "flush") && !flushed) {
    fail("flush without a model returns at once, flushed");
  }
  if (ok(codeoid_memory_embedding_status(memory, &out), "embedding status")) {
    expect_contains(&out, "\"phase\":\"disabled\"", "no model in this example");
    codeoid_string_free(&out);
  }
  if (ok(codeoid_memory_warnings(memory, &out), "warnings")) {
    if (strcmp(out.ptr, "[]") != 0) {
      fail("no warnings expected, got %s", out.ptr);
    }
    codeoid_string_free(&out);
  }

  /* 5. The workspace index block for the system prompt. */
  if (ok(codeoid_memory_workspace_index(memory, TEXT(session), &out), "workspace index")) {
    expect_contains(&out, "# Memory Index", "index title");
    expect_contains(&out, "src/store/schema.rs", "hot file");
    printf("--- workspace index ---\n%s\n", out.ptr);
    codeoid_string_free(&out);
  }

  /* 6. Rotation: the policy's verdict, a manual rotation, and the seed (handed out once). */
  if (ok(codeoid_memory_rotation_decision(memory, TEXT(session), &out), "rotation decision")) {
    expect_contains(&out, "\"reason\":\"below_threshold\"", "decision reason");
    printf("decision: %s\n", out.ptr);
    codeoid_string_free(&out);
  }
  if (ok(codeoid_memory_rotate(memory, TEXT(session), TEXT("ctx_2"), &out), "rotate")) {
    expect_contains(&out, "\"count\":1", "rotation count");
    codeoid_string_free(&out);
  }
  if (ok(codeoid_memory_take_seed(memory, TEXT(session), &out), "take seed")) {
    expect_contains(&out, "<rotation_context>", "seed block");
    expect_contains(&out, "migration 5", "seed anchor");
    codeoid_string_free(&out);
  }
  if (ok(codeoid_memory_take_seed(memory, TEXT(session), &out), "take seed again")) {
    if (strcmp(out.ptr, "null") != 0) {
      fail("a seed is handed out once, got %s", out.ptr);
    }
    codeoid_string_free(&out);
  }

  /* 7. Compress a long test log: failures and the summary survive. */
  size_t cap = 64 * 1024, len = 0;
  char *log = malloc(cap);
  for (int i = 0; i < 400; i++) {
    len += (size_t)snprintf(log + len, cap - len, "test store::tests::case_%d ... ok\n", i);
  }
  len += (size_t)snprintf(log + len, cap - len,
                          "test store::tests::migrates ... FAILED\n\nfailures:\n    "
                          "store::tests::migrates\n\ntest result: FAILED. 400 passed; 1 failed; "
                          "0 ignored\n");
  if (ok(codeoid_memory_compress(memory, TEXT("cargo test"), log, len, &out), "compress")) {
    expect_contains(&out, "store::tests::migrates", "failing test kept");
    expect_contains(&out, "400 passed; 1 failed", "summary kept");
    printf("compressed %zu bytes of test log to %zu bytes of JSON\n", len, out.len);
    codeoid_string_free(&out);
  }
  free(log);

  /* 8. Fork the session for another backend: a new session with a verbatim copy of the turns,
   *    and the conversation translated to Gemini `contents`, ready to send. */
  if (ok(codeoid_memory_fork(memory, TEXT(session), -1, CODEOID_FORMAT_GEMINI,
                             TEXT("gemini-2.5-pro"), TEXT("schema bug on gemini"),
                             TEXT("{\"id\":\"ses_on_gemini\"}"), &out),
         "fork")) {
    expect_contains(&out, "\"copied_turns\":20", "fork copies every turn");
    expect_contains(&out, "\"parent_session_id\":\"ses_quickstart\"", "fork lineage");
    expect_contains(&out, "\"functionCall\"", "handoff in gemini format");
    printf("forked ses_quickstart to ses_on_gemini (%zu bytes of JSON)\n", out.len);
    codeoid_string_free(&out);
  }

  /* 9. Translate canonical turns directly, without a store. */
  const char *turns =
      "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"read schema.rs\"}]},"
      "{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"toolu_1\",\"name\":"
      "\"Read\",\"input\":{\"file_path\":\"src/store/schema.rs\"}}]},"
      "{\"role\":\"user\",\"parts\":[{\"type\":\"tool_result\",\"call_id\":\"toolu_1\","
      "\"parts\":[{\"type\":\"text\",\"text\":\"const SCHEMA_VERSION: u32 = 5;\"}]}]}]";
  if (ok(codeoid_translate_to_messages(CODEOID_FORMAT_GEMINI, TEXT("gemini-2.5-pro"),
                                       TEXT(turns), NULL, 0, &out),
         "translate")) {
    expect_contains(&out, "\"functionCall\"", "gemini call");
    expect_contains(&out, "\"functionResponse\"", "gemini response");
    codeoid_string_free(&out);
  }

  /* 10. Errors are values with stable codes; NULL arguments are reported, not crashed on. */
  codeoid_error *err = codeoid_memory_episode(memory, TEXT("ep_does_not_exist"), &out);
  if (codeoid_error_code(err) != CODEOID_ERROR_NOT_FOUND) {
    fail("expected not_found, got %u", codeoid_error_code(err));
  } else {
    printf("expected error %u (%s): %s\n", codeoid_error_code(err),
           codeoid_error_code_name(codeoid_error_code(err)), codeoid_error_message(err));
  }
  codeoid_error_free(err);
  err = codeoid_memory_session(memory, NULL, 0, &out);
  if (codeoid_error_code(err) != CODEOID_ERROR_NULL_ARGUMENT) {
    fail("expected null_argument, got %u", codeoid_error_code(err));
  }
  codeoid_error_free(err);
  err = codeoid_translate_to_messages(42, NULL, 0, TEXT("[]"), NULL, 0, &out);
  if (codeoid_error_code(err) != CODEOID_ERROR_INVALID_INPUT) {
    fail("expected invalid_input for format 42, got %u", codeoid_error_code(err));
  }
  codeoid_error_free(err);
  codeoid_string_free(&out); /* never filled: freeing an all-zero string is a no-op */

  codeoid_memory_free(memory);
  nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("quickstart: all checks passed\n");
  return 0;
}
