/*
 * Stopping a long call from a signal handler: a harness that runs a command for its model lets
 * the person at the terminal stop it with Ctrl-C. The handler raises a codeoid_cancel flag (an
 * atomic store, async-signal-safe); codeoid_memory_run_cancellable sees it within about 0.1 s,
 * passes SIGINT on to the command's process group, kills what is left a second later, stores what
 * the command printed, and returns it with "interrupted": true.
 *
 * The flag lives as long as the handler may run (here, the whole program), so the handler never
 * touches freed memory; codeoid_cancel_reset lowers it before each call the handler may stop (a
 * raised flag makes a call return CODEOID_ERROR_CANCELLED without running anything, which is
 * what a Ctrl-C between two calls does to the next one unless the flag is lowered).
 *
 * So that it runs unattended (it is a test too: `make test-c`), the signal is SIGALRM, which the
 * command sends to this program once it has started, standing in for a person pressing Ctrl-C;
 * a real harness installs the same handler for SIGINT.
 *
 * Build (after `make ffi-static`):
 *   cc -std=c11 -Wall -Wextra -Werror -Iinclude examples/c/stop_a_run.c \
 *      target/ffi/debug/libcodeoid.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -o stop_a_run
 */
#define _XOPEN_SOURCE 700

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codeoid.h"

#define TEXT(s) (s), strlen(s)

/* The flag the handler raises: set once, before the handler is installed, never freed while the
 * handler may run. */
static codeoid_cancel *stop_flag = NULL;

static void on_signal(int signo) {
  (void)signo;
  codeoid_cancel_request(stop_flag);
}

/* Prints the error (if any), frees it, and returns its code (0 for success). */
static unsigned report(codeoid_error *err, const char *what) {
  if (err == NULL) {
    return 0;
  }
  unsigned code = codeoid_error_code(err);
  fprintf(stderr, "%s: %s: %s\n", what, codeoid_error_code_name(code), codeoid_error_message(err));
  codeoid_error_free(err);
  return code;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void) {
  char dir[] = "/tmp/codeoid-stop-XXXXXX";
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  char config[512];
  snprintf(config, sizeof config,
           "{\"db_path\": \"%s/codeoid.db\", \"workspace_dir\": \"%s\", "
           "\"embeddings\": {\"enabled\": false}}",
           dir, dir);
  codeoid_memory *memory = NULL;
  if (report(codeoid_memory_open(TEXT(config), &memory), "open")) {
    return 1;
  }
  int failed = 0;
  codeoid_string session = {0};
  const char *options = "{\"id\": \"ses_stop\"}";
  failed |= report(codeoid_memory_start_session(memory, TEXT(options), &session), "start") != 0;
  codeoid_string_free(&session);

  stop_flag = codeoid_cancel_new();
  if (stop_flag == NULL) {
    fprintf(stderr, "codeoid_cancel_new failed\n");
    return 1;
  }
  /* SA_RESTART: system calls the signal lands in go on instead of failing with EINTR. */
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGALRM, &action, NULL) != 0) {
    perror("sigaction");
    return 1;
  }

  /* The command signals this program once it has started, then would run for 30 s. */
  codeoid_cancel_reset(stop_flag);
  double started = now();
  codeoid_string out = {0};
  const char *command = "echo started; kill -ALRM $PPID; sleep 30";
  failed |= report(codeoid_memory_run_cancellable(memory, TEXT("ses_stop"), TEXT(command), NULL,
                                                  stop_flag, &out),
                   "run") != 0;
  double took = now() - started;
  if (out.ptr == NULL || strstr(out.ptr, "\"interrupted\":true") == NULL ||
      strstr(out.ptr, "started") == NULL || took > 10.0) {
    fprintf(stderr, "FAIL: expected an interrupted run within seconds, got after %.1f s: %s\n",
            took, out.ptr ? out.ptr : "(null)");
    failed = 1;
  }
  printf("stopped after %.1f s: %s\n", took, out.ptr ? out.ptr : "(null)");
  codeoid_string_free(&out);

  /* The flag stays raised: a call given it now runs nothing... */
  if (!codeoid_cancel_requested(stop_flag) ||
      report(codeoid_memory_run_cancellable(memory, TEXT("ses_stop"), TEXT("echo again"), NULL,
                                            stop_flag, &out),
             "run with a raised flag") != CODEOID_ERROR_CANCELLED) {
    fprintf(stderr, "FAIL: a raised flag should stop the next call before it starts\n");
    failed = 1;
  }
  /* ...until it is lowered. */
  codeoid_cancel_reset(stop_flag);
  failed |= report(codeoid_memory_run_cancellable(memory, TEXT("ses_stop"), TEXT("echo again"),
                                                  NULL, stop_flag, &out),
                   "run with the flag lowered") != 0;
  if (out.ptr == NULL || strstr(out.ptr, "\"stdout\":\"again\\n\"") == NULL) {
    fprintf(stderr, "FAIL: the lowered flag should let the call run: %s\n",
            out.ptr ? out.ptr : "(null)");
    failed = 1;
  }
  codeoid_string_free(&out);
  codeoid_memory_free(memory);
  /* The handler may no longer run once the flag is freed. */
  signal(SIGALRM, SIG_DFL);
  codeoid_cancel_free(stop_flag);

  char cleanup[600];
  snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
  if (system(cleanup) != 0) {
    fprintf(stderr, "could not remove %s\n", dir);
  }
  return failed;
}
