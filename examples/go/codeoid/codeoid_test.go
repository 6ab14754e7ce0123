package codeoid_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codeoid/codeoid/examples/go/codeoid"
)

// open opens a memory on a fresh store file with its own workspace directory, without an
// embedding model (lexical recall; no worker thread looks for or downloads one).
func open(t *testing.T) *codeoid.Memory {
	return openWith(t, codeoid.NoEmbeddings())
}

// openWith is open with the given embedding settings.
func openWith(t *testing.T, embeddings *codeoid.Embeddings) *codeoid.Memory {
	t.Helper()
	dir := t.TempDir()
	workspace := filepath.Join(dir, "project")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := codeoid.Open(codeoid.Config{DBPath: filepath.Join(dir, "codeoid.db"), WorkspaceDir: workspace, Embeddings: embeddings})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// exchange is one prompt, a Read call, its result and the answer.
func exchange(n int, inputTokens uint64) []codeoid.Turn {
	usage := func(tokens uint64) *codeoid.Usage {
		return &codeoid.Usage{Calls: []codeoid.CallUsage{{InputTokens: tokens, OutputTokens: 80}}}
	}
	callID := fmt.Sprintf("toolu_%d", n)
	return []codeoid.Turn{
		{ID: fmt.Sprintf("u%d", n), Role: "user", Parts: []codeoid.Part{
			codeoid.TextPart(fmt.Sprintf("Why does migration %d fail in store/schema.rs?", n))}},
		{ID: fmt.Sprintf("a%d", n), Role: "assistant", Model: "claude-sonnet-4-5", Usage: usage(inputTokens), Parts: []codeoid.Part{
			codeoid.TextPart("Reading the schema."),
			mustPart(codeoid.ToolCallPart(callID, "Read", map[string]string{"file_path": "src/store/schema.rs"}))}},
		{ID: fmt.Sprintf("r%d", n), Role: "user", Parts: []codeoid.Part{
			codeoid.ToolResultPart(callID, fmt.Sprintf("const SCHEMA_VERSION: u32 = %d;", n), false)}},
		{ID: fmt.Sprintf("f%d", n), Role: "assistant", Model: "claude-sonnet-4-5", Usage: usage(inputTokens + 400), Parts: []codeoid.Part{
			codeoid.TextPart(fmt.Sprintf("user_version is bumped before migration %d runs.", n))}},
	}
}

// mustPart is the part, or a panic: for parts built from literals that always encode.
func mustPart(part codeoid.Part, err error) codeoid.Part {
	if err != nil {
		panic(err)
	}
	return part
}

// ptr is a pointer to a copy of v, for the optional fields of configs and options.
func ptr[T any](v T) *T { return &v }

func record(t *testing.T, m *codeoid.Memory, session string, turns []codeoid.Turn) []string {
	t.Helper()
	var ids []string
	for _, turn := range turns {
		outcome, err := m.RecordTurn(session, turn)
		if err != nil {
			t.Fatalf("record %s: %v", turn.ID, err)
		}
		ids = append(ids, outcome.Recorded.EpisodeIDs...)
	}
	return ids
}

func TestVersionMatchesHeader(t *testing.T) {
	if codeoid.ABIVersion() != codeoid.HeaderABIVersion {
		t.Fatalf("library ABI %x, header %x", codeoid.ABIVersion(), codeoid.HeaderABIVersion)
	}
	if !strings.HasPrefix(codeoid.Version(), "0.") {
		t.Fatalf("version %q", codeoid.Version())
	}
}

func TestQuickstartPath(t *testing.T) {
	m := open(t)
	session, err := m.StartSession(codeoid.SessionOptions{ID: "ses_go", Name: "schema bug"})
	if err != nil || session.ID != "ses_go" || *session.Name != "schema bug" {
		t.Fatalf("start session: %+v %v", session, err)
	}
	var ids []string
	for n := 1; n <= 5; n++ {
		ids = append(ids, record(t, m, session.ID, exchange(n, uint64(40000+10000*n)))...)
	}
	if len(ids) != 9 {
		t.Fatalf("episode ids: %v", ids)
	}

	episode, err := m.Episode(ids[0])
	if err != nil || episode.Kind != "tool_call" || *episode.ToolName != "Read" {
		t.Fatalf("episode: %+v %v", episode, err)
	}
	if !strings.Contains(episode.Content, "SCHEMA_VERSION: u32 = 1") || episode.Paths[0].Relative != "src/store/schema.rs" {
		t.Fatalf("episode content/paths: %+v", episode)
	}
	text, err := m.EpisodeText(session.ID, ids[0])
	if err != nil || !strings.Contains(text, "current session") {
		t.Fatalf("episode text: %q %v", text, err)
	}

	page, err := m.Timeline(codeoid.TimelineQuery{Limit: 4})
	if err != nil || len(page.Episodes) != 4 || page.Next == nil {
		t.Fatalf("timeline: %+v %v", page, err)
	}
	next, err := m.Timeline(*page.Next)
	if err != nil || len(next.Episodes) != 4 || next.Episodes[0].ID == page.Episodes[0].ID {
		t.Fatalf("next page: %+v %v", next, err)
	}
	timeline, err := m.TimelineText(session.ID, codeoid.TimelineQuery{})
	if err != nil || !strings.Contains(timeline, "(episode_id: ep_") {
		t.Fatalf("timeline text: %q %v", timeline, err)
	}

	index, err := m.WorkspaceIndex(session.ID)
	if err != nil || !strings.HasPrefix(index, "# Memory Index") || !strings.Contains(index, "src/store/schema.rs") {
		t.Fatalf("index: %q %v", index, err)
	}

	decision, err := m.RotationDecision(session.ID)
	if err != nil || decision.ShouldRotate || decision.Reason != "below_threshold" || decision.Window.Tokens != 200000 {
		t.Fatalf("decision: %+v %v", decision, err)
	}
	rotation, err := m.Rotate(session.ID, "ctx_2")
	if err != nil || rotation.Count != 1 || rotation.BackingContextID != "ctx_2" {
		t.Fatalf("rotate: %+v %v", rotation, err)
	}
	seed, err := m.TakeSeed(session.ID)
	if err != nil || seed == nil || !strings.Contains(seed.Text, "migration 5") {
		t.Fatalf("seed: %+v %v", seed, err)
	}
	if again, err := m.TakeSeed(session.ID); err != nil || again != nil {
		t.Fatalf("second seed: %+v %v", again, err)
	}

	var log strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&log, "test store::tests::case_%d ... ok\n", i)
	}
	log.WriteString("test store::tests::migrates ... FAILED\n\nfailures:\n    store::tests::migrates\n\ntest result: FAILED. 300 passed; 1 failed; 0 ignored\n")
	compressed, err := m.Compress("cargo test", []byte(log.String()))
	if err != nil || compressed == nil || !strings.Contains(compressed.Text, "store::tests::migrates") || compressed.BytesOut >= compressed.BytesIn {
		t.Fatalf("compress: %+v %v", compressed, err)
	}
	if none, err := m.Compress("cargo test", nil); err != nil || none != nil {
		t.Fatalf("empty output: %+v %v", none, err)
	}

	run, err := m.Run(session.ID, "printf 'one\\ntwo\\n'; exit 4")
	if err != nil || run.ExitCode != 4 || run.EpisodeID == nil {
		t.Fatalf("run: %+v %v", run, err)
	}

	gemini, err := codeoid.ToMessages(codeoid.Gemini, "gemini-2.5-pro", exchange(9, 100), nil)
	if err != nil || !strings.Contains(string(gemini.Messages), "functionCall") {
		t.Fatalf("to gemini: %+v %v", gemini, err)
	}
	back, err := codeoid.FromMessages(codeoid.Gemini, "gemini-2.5-pro", gemini.Messages, nil)
	if err != nil || len(back.Turns) != 4 || back.Turns[1].Parts[1].Name != "Read" {
		t.Fatalf("from gemini: %+v %v", back, err)
	}
	body, err := codeoid.ToRequest(codeoid.Anthropic, "claude-sonnet-4-5", codeoid.Request{System: "be careful", Turns: exchange(9, 100)}, nil)
	if err != nil || !strings.Contains(string(body.Body), `"system":"be careful"`) {
		t.Fatalf("request: %s %v", body.Body, err)
	}

	finished, err := m.FinishSession(session.ID)
	if err != nil || len(finished) != 1 {
		t.Fatalf("finish: %v %v", finished, err)
	}
	sessions, err := m.Sessions()
	if err != nil || len(sessions) != 1 || sessions[0].TurnCount != 20 || sessions[0].RotationCount != 1 {
		t.Fatalf("sessions: %+v %v", sessions, err)
	}
}

func TestGeminiMessagesOneAtATimeAndTurnsBack(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_gemini"}); err != nil {
		t.Fatal(err)
	}
	record := func(message string, usage *codeoid.Usage) codeoid.TurnOutcome {
		t.Helper()
		outcome, err := m.RecordMessage("ses_gemini", codeoid.Gemini, "gemini-2.5-pro", json.RawMessage(message), usage)
		if err != nil {
			t.Fatal(err)
		}
		return outcome
	}
	record(`{"role": "user", "parts": [{"text": "list twice"}]}`, nil)
	for i := 0; i < 2; i++ {
		usage := &codeoid.Usage{Calls: []codeoid.CallUsage{{InputTokens: 900, OutputTokens: 10}}}
		record(`{"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]}`, usage)
		outcome := record(`{"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a.rs"}}}]}`, nil)
		if len(outcome.Recorded.EpisodeIDs) != 1 {
			t.Fatalf("a response closes its call: %+v", outcome)
		}
	}
	list := `[{"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
		{"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "b.rs"}}}]}]`
	if recorded, err := m.RecordMessages("ses_gemini", codeoid.Gemini, "", json.RawMessage(list)); err != nil || len(recorded) != 2 {
		t.Fatalf("list: %v %+v", err, recorded)
	}
	turns, err := m.Turns("ses_gemini", 0, codeoid.AllTurns)
	if err != nil {
		t.Fatal(err)
	}
	var calls, results []string
	for _, turn := range turns {
		for _, part := range turn.Parts {
			switch part.Type {
			case "tool_call":
				calls = append(calls, part.ID)
			case "tool_result":
				results = append(results, part.CallID)
			}
		}
	}
	if len(turns) != 7 || len(calls) != 3 || calls[0] == calls[1] || calls[1] == calls[2] || calls[0] == calls[2] {
		t.Fatalf("each call its own id: %d turns, calls %v", len(turns), calls)
	}
	if strings.Join(results, ",") != strings.Join(calls, ",") {
		t.Fatalf("each response answers its call: %v vs %v", results, calls)
	}
	if turns[1].Usage == nil || turns[1].Usage.Calls[0].InputTokens != 900 {
		t.Fatalf("usage kept: %+v", turns[1])
	}
	// The provider's own usage object, as Gemini's SDK returns it: cached input counted once.
	gemini := `{"promptTokenCount": 1000, "cachedContentTokenCount": 600, "candidatesTokenCount": 7}`
	outcome, err := m.RecordMessageRawUsage("ses_gemini", codeoid.Gemini, "", json.RawMessage(`{"role": "model", "parts": [{"text": "done"}]}`), json.RawMessage(gemini))
	if err != nil {
		t.Fatal(err)
	}
	turns, err = m.Turns("ses_gemini", outcome.Recorded.Seq, outcome.Recorded.Seq+1)
	if err != nil || len(turns) != 1 || turns[0].Usage == nil {
		t.Fatalf("raw usage: %v %+v", err, turns)
	}
	if got := turns[0].Usage.Calls[0]; got.InputTokens != 400 || got.CacheReadTokens != 600 || got.OutputTokens != 7 {
		t.Fatalf("gemini usage read: %+v", got)
	}
	if _, err := m.RecordMessageRawUsage("ses_gemini", codeoid.Gemini, "", json.RawMessage(`{"role": "model", "parts": [{"text": "x"}]}`), json.RawMessage(`{"promptTokenCount": -1}`)); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("bad usage: %v", err)
	}
	if _, err := m.RecordMessage("ses_gemini", codeoid.Gemini, "", json.RawMessage(`{"role": "model", "parts": "x"}`), nil); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("bad message: %v", err)
	}
	if _, err := m.Turns("ses_missing", 0, codeoid.AllTurns); !errors.Is(err, codeoid.ErrNotFound) {
		t.Fatalf("missing session: %v", err)
	}
	if _, err := m.RecordTurn("ses_gemini", codeoid.Turn{Role: "user"}); err != nil {
		t.Fatalf("a turn without parts is an empty turn: %v", err)
	}
	if _, err := m.RecordTurns("ses_gemini", []codeoid.Turn{{Role: "user"}, {Role: "assistant"}}); err != nil {
		t.Fatalf("turns without parts are empty turns: %v", err)
	}
	if _, err := codeoid.ToMessages(codeoid.OpenAIChat, "", []codeoid.Turn{{Role: "user"}}, nil); err != nil {
		t.Fatalf("a turn without parts translates: %v", err)
	}
}

func TestErrorsAreValuesWithCodes(t *testing.T) {
	m := open(t)
	_, err := m.Episode("ep_missing")
	var cerr *codeoid.Error
	if !errors.As(err, &cerr) || cerr.Code() != codeoid.CodeNotFound || !strings.Contains(cerr.Message(), "ep_missing") {
		t.Fatalf("episode error: %v", err)
	}
	if !errors.Is(err, codeoid.ErrNotFound) || errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("errors.Is: %v", err)
	}
	if _, err := codeoid.ToMessages(codeoid.Format(42), "", nil, nil); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("bad format: %v", err)
	}
	if _, err := codeoid.ToMessages(codeoid.Anthropic, "", nil, map[string]any{"strictly": true}); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("bad option: %v", err)
	}
	if _, err := m.RecordTurn("ses_missing", exchange(1, 1)[0]); !errors.Is(err, codeoid.ErrNotFound) {
		t.Fatalf("missing session: %v", err)
	}
	if _, err := m.Session("ses_\xff"); !errors.Is(err, codeoid.ErrInvalidUTF8) {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	if _, err := m.Session(""); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("empty id is a value, not NULL: %v", err)
	}
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_r"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Rotate("ses_r", ""); !errors.Is(err, codeoid.ErrRotationRefused) {
		t.Fatalf("rotation guard: %v", err)
	}
	if _, err := codeoid.Open(codeoid.Config{Rotation: map[string]any{"auto_rotat": true}}); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("bad config: %v", err)
	}
}

func TestCodesMatchTheLibrary(t *testing.T) {
	seen := map[string]bool{}
	for _, code := range codeoid.AllCodes {
		name := code.Name()
		if name == "" || seen[name] {
			t.Fatalf("code %d has name %q", code, name)
		}
		seen[name] = true
		if code.Error() != "codeoid: "+name {
			t.Fatalf("%d: %q", code, code.Error())
		}
	}
	if codeoid.Code(0).Name() != "" || codeoid.Code(15).Name() != "" {
		t.Fatal("unknown codes have no name")
	}
	if codeoid.CodeNotFound != 2 || codeoid.CodePanic != 1002 || codeoid.CodeCancelled != 1003 {
		t.Fatal("codes are stable numbers")
	}
}

func TestCloseIsIdempotentAndLaterCallsFail(t *testing.T) {
	m := open(t)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sessions(); !errors.Is(err, codeoid.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestManyGoroutinesShareOneMemory(t *testing.T) {
	m := open(t)
	const workers, rounds = 8, 4
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*8)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			session := fmt.Sprintf("ses_worker_%d", w)
			if _, err := m.StartSession(codeoid.SessionOptions{ID: session}); err != nil {
				errs <- err
				return
			}
			for r := 0; r < rounds; r++ {
				for _, turn := range exchange(w*100+r, 1000) {
					outcome, err := m.RecordTurn(session, turn)
					if err != nil {
						errs <- err
						continue
					}
					for _, id := range outcome.Recorded.EpisodeIDs {
						if ep, err := m.Episode(id); err != nil || ep.SessionID != session {
							errs <- fmt.Errorf("episode %s: %+v %v", id, ep, err)
						}
					}
				}
				missing := fmt.Sprintf("ep_missing_%d_%d", w, r)
				if _, err := m.Episode(missing); !errors.Is(err, codeoid.ErrNotFound) || !strings.Contains(err.Error(), missing) {
					errs <- fmt.Errorf("each goroutine gets its own error: %v", err)
				}
				if _, err := m.WorkspaceIndex(session); err != nil {
					errs <- err
				}
				if _, err := m.Recall("", "SCHEMA_VERSION", &codeoid.RecallOptions{Limit: 3}); err != nil {
					errs <- err
				}
				if out, err := m.CallTool(session, "recall", `{"query": "migration"}`); err != nil || out.IsError {
					errs <- fmt.Errorf("recall tool: %+v %v", out, err)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sessions, err := m.Sessions()
	if err != nil || len(sessions) != workers {
		t.Fatalf("sessions: %d %v", len(sessions), err)
	}
	for _, s := range sessions {
		if s.TurnCount != rounds*4 {
			t.Fatalf("%s has %d turns", s.ID, s.TurnCount)
		}
	}
}

func TestCloseWhileOtherGoroutinesCall(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_close"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_, err := m.Timeline(codeoid.TimelineQuery{})
				if errors.Is(err, codeoid.ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	_ = m.Close()
	wg.Wait()
}

func TestCallsDuringCloseFailAtOnce(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_slow"}); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		close(started)
		_, _ = m.Run("ses_slow", "sleep 2")
		close(done)
	}()
	<-started
	time.Sleep(200 * time.Millisecond) // the command is running
	go func() { _ = m.Close() }()
	time.Sleep(200 * time.Millisecond) // Close waits for the command
	begin := time.Now()
	_, err := m.Sessions()
	if !errors.Is(err, codeoid.ErrClosed) {
		t.Fatalf("a call during Close: %v", err)
	}
	if waited := time.Since(begin); waited > 500*time.Millisecond {
		t.Fatalf("a call during Close waited %v for the call in flight", waited)
	}
	<-done
}

func TestForkAndImport(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_parent"}); err != nil {
		t.Fatal(err)
	}
	record(t, m, "ses_parent", exchange(1, 1000))
	record(t, m, "ses_parent", exchange(2, 1000))
	same, err := m.Fork("ses_parent", 3, codeoid.SameBackend, "", "first half", nil)
	if err != nil || same.CopiedTurns != 4 || same.Handoff != nil || same.Session.Lineage.ParentSessionID != "ses_parent" {
		t.Fatalf("fork: %+v %v", same, err)
	}
	gemini, err := m.Fork("ses_parent", codeoid.Tip, codeoid.Gemini, "gemini-2.5-pro", "on gemini",
		&codeoid.ForkOptions{ID: "ses_gemini", Handoff: map[string]any{"budget_fraction": 0.25}})
	if err != nil || gemini.Session.ID != "ses_gemini" || gemini.Handoff == nil || !strings.Contains(string(gemini.Handoff.Messages), "functionCall") {
		t.Fatalf("fork to gemini: %+v %v", gemini, err)
	}
	if _, err := m.Fork("ses_parent", codeoid.Tip, codeoid.SameBackend, "gemini-2.5-pro", "x", nil); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("model without format: %v", err)
	}

	log := filepath.Join(t.TempDir(), "imp1.jsonl")
	lines := `{"type":"user","uuid":"u1","sessionId":"imp1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"why does the static link fail?"}}
{"type":"assistant","uuid":"a1","sessionId":"imp1","requestId":"r1","timestamp":"2026-01-01T00:00:05Z","message":{"id":"m1","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"it needs -ldl."}],"usage":{"input_tokens":10,"output_tokens":5}}}
`
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	summary, err := m.Import(log, nil)
	if err != nil || summary.SessionsNew != 1 || summary.TurnsAdded != 2 {
		t.Fatalf("import: %+v %v", summary, err)
	}
	again, err := m.Import(log, &codeoid.ImportOptions{BatchTurns: 1})
	if err != nil || again.SessionsNew != 0 || again.TurnsAdded != 0 {
		t.Fatalf("re-import: %+v %v", again, err)
	}
	if _, err := m.Import(filepath.Join(t.TempDir(), "missing.jsonl"), nil); !errors.Is(err, codeoid.ErrNotFound) {
		t.Fatalf("missing log: %v", err)
	}
}

func TestARunPastItsTimeoutIsKilled(t *testing.T) {
	dir := t.TempDir()
	m, err := codeoid.Open(codeoid.Config{DBPath: filepath.Join(dir, "codeoid.db"), WorkspaceDir: dir,
		Embeddings: codeoid.NoEmbeddings(), RunTimeoutSecs: ptr(0.5)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_timeout"}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	run, err := m.Run("ses_timeout", "echo started; sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	if !run.TimedOut || run.ExitCode != 137 || !strings.HasPrefix(run.Stdout, "started\n") || time.Since(begin) > 10*time.Second {
		t.Fatalf("timed out run: %+v after %v", run, time.Since(begin))
	}
	if _, err := codeoid.Open(codeoid.Config{DBPath: filepath.Join(dir, "codeoid.db"), WorkspaceDir: dir,
		Embeddings: codeoid.NoEmbeddings(), RunTimeoutSecs: ptr(-1.0)}); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("negative timeout: %v", err)
	}
}

func TestARunsOwnTimeoutReplacesTheConfiguredOne(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_own_timeout"}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	run, err := m.RunWithTimeout("ses_own_timeout", "echo started; sleep 30", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !run.TimedOut || run.ExitCode != 137 || !strings.HasPrefix(run.Stdout, "started\n") || time.Since(begin) > 10*time.Second {
		t.Fatalf("timed out run: %+v after %v", run, time.Since(begin))
	}
	run, err = m.RunWithTimeout("ses_own_timeout", "sleep 0.2; echo finished", 0)
	if err != nil || run.TimedOut || run.Stdout != "finished\n" {
		t.Fatalf("run without a timeout: %+v, %v", run, err)
	}
	if _, err := m.RunWithTimeout("ses_own_timeout", "true", -time.Second); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("negative timeout: %v", err)
	}
}

func TestARunReturnsWhileWhatItStartedInTheBackgroundRunsOn(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_bg"}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	run, err := m.Run("ses_bg", "echo started; sleep 5 &")
	if err != nil || !run.LeftRunning || !strings.HasPrefix(run.Stdout, "started\n") || time.Since(begin) > 3*time.Second {
		t.Fatalf("background run: %+v, %v after %v", run, err, time.Since(begin))
	}
	if run, err := m.Run("ses_bg", "echo done"); err != nil || run.LeftRunning {
		t.Fatalf("plain run: %+v, %v", run, err)
	}
}

func TestBlobsComeBackByteForByte(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_blob"}); err != nil {
		t.Fatal(err)
	}
	run, err := m.Run("ses_blob", "for i in $(seq 1 3000); do echo \"line $i of a long build log\"; done")
	if err != nil || run.EpisodeID == nil {
		t.Fatalf("run: %+v %v", run, err)
	}
	episode, err := m.Episode(*run.EpisodeID)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&want, "line %d of a long build log\n", i)
	}
	for _, blob := range episode.Blobs {
		if blob.Role != "stdout" {
			continue
		}
		raw, err := m.Blob(blob.BlobID)
		if err != nil || string(raw) != want.String() {
			t.Fatalf("blob %s: %d bytes, %v", blob.BlobID, len(raw), err)
		}
		return
	}
	t.Fatalf("the raw stdout is kept as a blob: %+v", episode.Blobs)
}

func TestRecallAndTheMemoryTools(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_a"}); err != nil {
		t.Fatal(err)
	}
	ids := record(t, m, "ses_a", exchange(1, 1000))
	ids = append(ids, record(t, m, "ses_a", exchange(2, 1000))...)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_b"}); err != nil {
		t.Fatal(err)
	}

	hits, err := m.Recall("ses_b", "SCHEMA_VERSION", &codeoid.RecallOptions{Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].SessionID != "ses_a" || !strings.Contains(hits[0].Content, "SCHEMA_VERSION") {
		t.Fatalf("recall: %+v %v", hits, err)
	}
	if c := hits[0].Components; c.Vec != 0 || c.BM25 <= 0 || hits[0].Score <= 0 {
		t.Fatalf("lexical components: %+v", hits[0])
	}
	if r := hits[0].Relevance; r.Terms != 1 || len(r.Held) != 1 || r.Weak || r.Lift != nil {
		t.Fatalf("relevance of a hit holding the one query term, no model: %+v", r)
	}
	if own, err := m.Recall("ses_a", "SCHEMA_VERSION", nil); err != nil || len(own) != 0 {
		t.Fatalf("the current session is excluded: %+v %v", own, err)
	}
	if none, err := m.Recall("", "SCHEMA_VERSION", &codeoid.RecallOptions{Filters: codeoid.RecallFilters{ToolName: "Bash"}}); err != nil || len(none) != 0 {
		t.Fatalf("filtered: %+v %v", none, err)
	}
	if _, err := m.Recall("", "x", &codeoid.RecallOptions{Limit: 101}); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("limit: %v", err)
	}
	if _, err := m.Recall("", "x", &codeoid.RecallOptions{AsOf: "yesterday"}); !errors.Is(err, codeoid.ErrInvalidInput) || !strings.Contains(err.Error(), "`as_of`") {
		t.Fatalf("as_of that is no time: %v", err)
	}
	if _, err := m.Recall("ses_missing", "x", nil); !errors.Is(err, codeoid.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}

	out, err := m.CallTool("ses_b", "codeoid_memory__get_episode", fmt.Sprintf(`{"episode_id": %q}`, ids[0]))
	if err != nil || out.IsError || !strings.Contains(out.Text, "# Tool: Read") {
		t.Fatalf("get_episode: %+v %v", out, err)
	}
	out, err = m.CallTool("ses_b", "recall", `{"query": "SCHEMA_VERSION", "limit": 1}`)
	if err != nil || out.IsError || !strings.Contains(out.Text, "episode_id: ep_") {
		t.Fatalf("recall tool: %+v %v", out, err)
	}
	if out, err := m.CallTool("", "timeline", ""); err != nil || out.IsError {
		t.Fatalf("timeline without arguments: %+v %v", out, err)
	}
	if out, err := m.CallTool("ses_b", "forget", "{}"); err != nil || !out.IsError || !strings.Contains(out.Text, "unknown memory tool") {
		t.Fatalf("an unknown tool is an error result: %+v %v", out, err)
	}

	specs, err := m.ToolSchemas("codeoid_memory")
	if err != nil || len(specs) != 4 || specs[0].Name != "codeoid_memory__recall" || specs[0].InputSchema["type"] != "object" {
		t.Fatalf("schemas: %+v %v", specs, err)
	}
	if _, err := m.ToolSchemas("has space"); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("bad prefix: %v", err)
	}
	for _, format := range []codeoid.Format{codeoid.Anthropic, codeoid.OpenAIChat, codeoid.OpenAIResponses, codeoid.Gemini} {
		declared, err := codeoid.DeclareTools(format, specs, nil)
		if err != nil || !strings.Contains(string(declared.Tools), "codeoid_memory__get_episode") {
			t.Fatalf("declare for %d: %s %v", format, declared.Tools, err)
		}
	}
	if _, err := codeoid.DeclareTools(codeoid.Format(0), specs, nil); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("bad format: %v", err)
	}

	found, err := m.RecallFile("src/store/schema.rs")
	if err != nil || found == nil || found.Episode.ID != ids[len(ids)-1] || found.Path.Access != "read" || found.Disk.State == "" || found.Part != nil {
		t.Fatalf("recall file: %+v %v", found, err)
	}
	if none, err := m.RecallFile("src/never_read.rs"); err != nil || none != nil {
		t.Fatalf("never read: %+v %v", none, err)
	}

	if flushed, err := m.Flush(-1); err != nil || !flushed {
		t.Fatalf("flush: %v %v", flushed, err)
	}
	if status, err := m.EmbeddingStatus(); err != nil || status.Phase != "disabled" {
		t.Fatalf("status: %+v %v", status, err)
	}
	if warnings, err := m.Warnings(); err != nil || len(warnings) != 0 {
		t.Fatalf("warnings: %v %v", warnings, err)
	}
	_ = m.Close()
	if _, err := m.CallTool("", "timeline", ""); !errors.Is(err, codeoid.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	if _, err := m.Flush(0); !errors.Is(err, codeoid.ErrClosed) {
		t.Fatalf("flush after close: %v", err)
	}
}

func TestAMissingModelLeavesRecallLexical(t *testing.T) {
	m := openWith(t, &codeoid.Embeddings{ModelDir: filepath.Join(t.TempDir(), "no-model")})
	status, err := m.EmbeddingStatus()
	if err != nil || status.Phase != "unavailable" {
		t.Fatalf("status: %+v %v", status, err)
	}
	if warnings, err := m.Warnings(); err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "lexical") {
		t.Fatalf("warnings: %v %v", warnings, err)
	}
	off := false
	if _, err := codeoid.Open(codeoid.Config{Embeddings: &codeoid.Embeddings{Enabled: &off, ModelDir: "/m"}}); !errors.Is(err, codeoid.ErrInvalidInput) {
		t.Fatalf("contradiction: %v", err)
	}
}

// TestRecallByMeaningWithTheRealModel needs CODEOID_TEST_MODEL_DIR (make test-go sets it).
func TestRecallByMeaningWithTheRealModel(t *testing.T) {
	dir := os.Getenv("CODEOID_TEST_MODEL_DIR")
	if dir == "" {
		t.Skip("CODEOID_TEST_MODEL_DIR is not set; run: export CODEOID_TEST_MODEL_DIR=$(./scripts/fetch-test-model.sh)")
	}
	m := openWith(t, &codeoid.Embeddings{ModelDir: dir})
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_model"}); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		record(t, m, "ses_model", exchange(n, 1000))
	}
	if flushed, err := m.Flush(2 * time.Minute); err != nil || !flushed {
		t.Fatalf("flush: %v %v", flushed, err)
	}
	status, err := m.EmbeddingStatus()
	if err != nil || status.Phase != "ready" || status.ModelID == nil || status.IndexedEpisodes < 3 {
		t.Fatalf("status: %+v %v", status, err)
	}
	// Goroutines recall by meaning while another records.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hits, err := m.Recall("", "which constant holds the database schema version?", nil)
			if err != nil || len(hits) == 0 || hits[0].Components.Vec <= 0 {
				errs <- fmt.Errorf("recall by meaning: %+v %v", hits, err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, turn := range exchange(4, 1000) {
			if _, err := m.RecordTurn("ses_model", turn); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// claudeLog is a Claude Code log line of session id, at a fixed time long past.
func claudeLog(id, uuid, text string) string {
	return fmt.Sprintf(`{"type":"user","uuid":%q,"sessionId":%q,"timestamp":"2020-01-01T00:00:00Z","message":{"role":"user","content":%q}}`+"\n", uuid, id, text)
}

func TestImportCanNeverFinishAndListsSkippedSessions(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	open := func() *codeoid.Memory { return open(t) }

	// An old session is finished by default, and left open with NeverFinish (JSON null).
	old := write("old.jsonl", claudeLog("imp_old", "u1", "why is the parser slow?"))
	m := open()
	summary, err := m.Import(old, nil)
	if err != nil || summary.SessionsFinished != 1 {
		t.Fatalf("default import: %+v %v", summary, err)
	}
	m = open()
	summary, err = m.Import(old, &codeoid.ImportOptions{NeverFinish: true})
	if err != nil || summary.SessionsNew != 1 || summary.SessionsFinished != 0 {
		t.Fatalf("never finish: %+v %v", summary, err)
	}
	if session, err := m.Session("imp_old"); err != nil || session.FinishedAt != nil {
		t.Fatalf("a never-finished session: %+v %v", session, err)
	}
	if summary, err := m.Import(old, &codeoid.ImportOptions{FinishAfterSecs: ptr(uint64(0))}); err != nil || summary.SessionsFinished != 1 {
		t.Fatalf("finish at once: %+v %v", summary, err)
	}
	if _, err := m.Import(old, &codeoid.ImportOptions{NeverFinish: true, FinishAfterSecs: ptr(uint64(5))}); err == nil || !strings.Contains(err.Error(), "NeverFinish") {
		t.Fatalf("both NeverFinish and FinishAfterSecs: %v", err)
	}

	// A second log claiming a session id already read in the same import is skipped, and listed.
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	write("logs/a.jsonl", claudeLog("imp_twice", "u1", "first conversation"))
	write("logs/b.jsonl", claudeLog("imp_twice", "u9", "another conversation, same id"))
	summary, err = open().Import(logs, nil)
	if err != nil || summary.SessionsSkipped != 1 || len(summary.SkippedSessions) != 1 {
		t.Fatalf("skipped sessions: %+v %v", summary, err)
	}
	skipped := summary.SkippedSessions[0]
	if skipped.SessionID != "imp_twice" || !strings.HasPrefix(skipped.SourcePath, logs) || skipped.Reason == "" {
		t.Fatalf("skipped session: %+v", skipped)
	}
}

func TestConfigTenantAndRunTimeoutOverrideTheEnvironment(t *testing.T) {
	t.Setenv("CODEOID_TENANT", "tenant-from-env")
	t.Setenv("CODEOID_RUN_TIMEOUT_SECS", "0.2")
	dir := t.TempDir()
	opened := 0
	openWith := func(config codeoid.Config) *codeoid.Memory {
		t.Helper()
		opened++
		config.DBPath = filepath.Join(dir, "codeoid.db")
		config.WorkspaceDir = dir
		config.Embeddings = codeoid.NoEmbeddings()
		m, err := codeoid.Open(config)
		if err != nil {
			t.Fatalf("open %+v: %v", config, err)
		}
		t.Cleanup(func() { _ = m.Close() })
		// Session ids are global to the store file, whatever the workspace.
		if _, err := m.StartSession(codeoid.SessionOptions{ID: fmt.Sprintf("ses_env_%d", opened)}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	workspaceID := func(m *codeoid.Memory) string {
		t.Helper()
		w, err := m.Workspace()
		if err != nil {
			t.Fatal(err)
		}
		return w.WorkspaceID
	}
	timedOut := func(m *codeoid.Memory, session string) bool {
		t.Helper()
		run, err := m.Run(session, "sleep 1; echo done")
		if err != nil {
			t.Fatal(err)
		}
		return run.TimedOut
	}
	plain := openWith(codeoid.Config{})
	fromEnv := openWith(codeoid.Config{FromEnv: true})
	if workspaceID(fromEnv) == workspaceID(plain) || !timedOut(fromEnv, "ses_env_2") {
		t.Fatal("FromEnv did not read CODEOID_TENANT and CODEOID_RUN_TIMEOUT_SECS")
	}
	overridden := openWith(codeoid.Config{FromEnv: true, Tenant: ptr(""), RunTimeoutSecs: ptr(0.0)})
	if workspaceID(overridden) != workspaceID(plain) {
		t.Fatal(`Tenant "" did not override CODEOID_TENANT`)
	}
	if timedOut(overridden, "ses_env_3") {
		t.Fatal("RunTimeoutSecs 0 did not override CODEOID_RUN_TIMEOUT_SECS")
	}
}

func TestTurnMetaKeepsLargeIntegersExact(t *testing.T) {
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_meta"}); err != nil {
		t.Fatal(err)
	}
	turn := codeoid.Turn{ID: "u1", Role: "user", Parts: []codeoid.Part{codeoid.TextPart("hi")},
		Meta: map[string]json.RawMessage{"big": json.RawMessage("9007199254740993"), "nested": json.RawMessage(`{"id":18446744073709551615}`)}}
	if _, err := m.RecordTurn("ses_meta", turn); err != nil {
		t.Fatal(err)
	}
	turns, err := m.Turns("ses_meta", 0, codeoid.AllTurns)
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns: %+v %v", turns, err)
	}
	if got := string(turns[0].Meta["big"]); got != "9007199254740993" {
		t.Fatalf("meta big: %s", got)
	}
	if got := string(turns[0].Meta["nested"]); got != `{"id":18446744073709551615}` {
		t.Fatalf("meta nested: %s", got)
	}
}

func TestAnEmptyUsageHasNoCallsRatherThanNull(t *testing.T) {
	encoded, err := json.Marshal(&codeoid.Usage{})
	if err != nil || string(encoded) != `{"calls":[]}` {
		t.Fatalf("empty usage: %s %v", encoded, err)
	}
	m := open(t)
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_usage"}); err != nil {
		t.Fatal(err)
	}
	turn := codeoid.Turn{ID: "a1", Role: "assistant", Usage: &codeoid.Usage{}, Parts: []codeoid.Part{codeoid.TextPart("done")}}
	if _, err := m.RecordTurn("ses_usage", turn); err != nil {
		t.Fatalf("a turn with an empty usage: %v", err)
	}
	message := json.RawMessage(`{"role": "assistant", "content": "done again"}`)
	if _, err := m.RecordMessage("ses_usage", codeoid.Anthropic, "", message, &codeoid.Usage{}); err != nil {
		t.Fatalf("a message with an empty usage: %v", err)
	}
}

func TestToolCallPartReportsInputThatCannotBeEncoded(t *testing.T) {
	for _, input := range []any{make(chan int), math.NaN(), map[string]any{"f": func() {}}} {
		if part, err := codeoid.ToolCallPart("c1", "Read", input); err == nil || !strings.Contains(err.Error(), `"c1"`) {
			t.Fatalf("input %T: %+v %v", input, part, err)
		}
	}
	part, err := codeoid.ToolCallPart("c1", "Read", map[string]int{"limit": 5})
	if err != nil || string(part.Input) != `{"limit":5}` {
		t.Fatalf("a good input: %+v %v", part, err)
	}
}

func TestAReadOnlyMemoryReadsAndRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	workspace := filepath.Join(dir, "project")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	config := codeoid.Config{DBPath: filepath.Join(dir, "codeoid.db"), WorkspaceDir: workspace, Embeddings: codeoid.NoEmbeddings()}
	writer, err := codeoid.Open(config)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = writer.Close() }()
	session, err := writer.StartSession(codeoid.SessionOptions{ID: "ses_read_only"})
	if err != nil {
		t.Fatal(err)
	}
	record(t, writer, session.ID, exchange(1, 1000))

	config.Store = map[string]any{"read_only": true}
	reader, err := codeoid.Open(config)
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	defer func() { _ = reader.Close() }()
	if got, err := reader.Session(session.ID); err != nil || got.TurnCount != 4 {
		t.Fatalf("read-only session: %+v, %v", got, err)
	}
	if _, err := reader.RecordTurn(session.ID, exchange(2, 1000)[0]); !errors.Is(err, codeoid.ErrIO) || !strings.Contains(err.Error(), "opened read-only") {
		t.Fatalf("a write on a read-only memory: %v", err)
	}
	config.DBPath = filepath.Join(dir, "none.db")
	if _, err := codeoid.Open(config); !errors.Is(err, codeoid.ErrNotFound) {
		t.Fatalf("a missing store opened read-only: %v", err)
	}
	if _, err := os.Stat(config.DBPath); !os.IsNotExist(err) {
		t.Fatalf("a read-only open created %s: %v", config.DBPath, err)
	}
}
