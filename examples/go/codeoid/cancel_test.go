package codeoid_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codeoid/codeoid/examples/go/codeoid"
)

func TestACancelledContextInterruptsARunAndKeepsItsOutput(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_ctx_run"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(400*time.Millisecond, cancel)
	begin := time.Now()
	run, err := m.RunContext(ctx, "ses_ctx_run", "echo started; sleep 30")
	if !errors.Is(err, context.Canceled) || !run.Interrupted || run.TimedOut || time.Since(begin) > 10*time.Second {
		t.Fatalf("interrupted run: %+v, %v after %v", run, err, time.Since(begin))
	}
	if !strings.HasPrefix(run.Stdout, "started\n") || !strings.Contains(run.Stdout, "was interrupted") || run.EpisodeID == nil {
		t.Fatalf("what it printed is shown and stored: %+v", run)
	}
	episode, err := m.Episode(*run.EpisodeID)
	if err != nil || !strings.Contains(episode.Content, "started") {
		t.Fatalf("stored episode: %+v, %v", episode, err)
	}

	// A deadline interrupts too; a context that ends after the command changes nothing.
	deadline, stop := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer stop()
	run, err = m.RunWithTimeoutContext(deadline, "ses_ctx_run", "sleep 30", 0)
	if !errors.Is(err, context.DeadlineExceeded) || !run.Interrupted {
		t.Fatalf("deadline: %+v, %v", run, err)
	}
	run, err = m.RunContext(context.Background(), "ses_ctx_run", "echo fine")
	if err != nil || run.Interrupted || run.Stdout != "fine\n" {
		t.Fatalf("uncancelled run: %+v, %v", run, err)
	}
	if _, err := m.RunWithTimeoutContext(context.Background(), "ses_ctx_run", "true", -time.Second); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("negative timeout: %v", err)
	}
}

func TestADoneContextRunsAndImportsNothing(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_ctx_done"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	marker := filepath.Join(t.TempDir(), "ran")
	if _, err := m.RunContext(ctx, "ses_ctx_done", "touch "+marker); !errors.Is(err, context.Canceled) {
		t.Fatalf("run with a done context: %v", err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the command ran: %v", err)
	}
	if _, err := m.ImportContext(ctx, writeLogs(t, 3), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("import with a done context: %v", err)
	}
	if sessions, err := m.Sessions(); err != nil || len(sessions) != 1 {
		t.Fatalf("nothing imported (only the started session): %d sessions, %v", len(sessions), err)
	}
}

func TestACancelledContextStopsAnImportBetweenFiles(t *testing.T) {
	const logs = 300
	m := open(t)
	path := writeLogs(t, logs)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancels anyway after a while, so that a failed import fails the test below instead
		// of leaving this goroutine waiting.
		giveUp := time.Now().Add(30 * time.Second)
		for time.Now().Before(giveUp) {
			if sessions, err := m.Sessions(); err == nil && len(sessions) > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	first, err := m.ImportContext(ctx, path, nil)
	if !errors.Is(err, context.Canceled) || !first.Stopped || first.SessionsNew == 0 || first.SessionsNew >= logs {
		t.Fatalf("stopped import: %+v, %v", first, err)
	}
	rest, err := m.ImportContext(context.Background(), path, nil)
	if err != nil || rest.Stopped || first.SessionsNew+rest.SessionsNew != logs {
		t.Fatalf("the rest: %+v, %v (first %d)", rest, err, first.SessionsNew)
	}
}

// writeLogs writes n one-session Claude Code logs into a new folder and returns it.
func writeLogs(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i < n; i++ {
		line := fmt.Sprintf(`{"type":"user","uuid":"u%d","sessionId":"imp%04d","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"why does test %d fail?"}}`, i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("imp%04d.jsonl", i)), []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
