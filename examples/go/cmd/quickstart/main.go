// Command quickstart walks the codeoid Go API: open a store, record a session, read memory
// back, recall and call the memory tools by name as a model would, build the workspace index,
// rotate, compress output and hand the conversation to another backend. It exits non-zero on the
// first surprise, so `make test-go` runs it as a check.
//
// Recall is lexical here: the store opens with codeoid.NoEmbeddings(), so no model is looked for
// or downloaded (hits rank by BM25, recency and paths). Set CODEOID_MODEL_DIR to a
// sentence-transformers checkpoint to recall by meaning instead.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codeoid/codeoid/examples/go/codeoid"
)

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

func check(ok bool, what string, args ...any) {
	if !ok {
		log.Fatalf("check failed: "+what, args...)
	}
}

func main() {
	log.SetFlags(0)
	check(codeoid.ABIVersion() == codeoid.HeaderABIVersion, "library and header versions differ")
	fmt.Println("codeoid", codeoid.Version())

	dir := must(os.MkdirTemp("", "codeoid-go-quickstart-"))
	defer os.RemoveAll(dir)
	workspace := filepath.Join(dir, "project")
	check(os.MkdirAll(workspace, 0o755) == nil, "mkdir")

	embeddings := codeoid.NoEmbeddings()
	if model := os.Getenv("CODEOID_MODEL_DIR"); model != "" {
		embeddings = &codeoid.Embeddings{ModelDir: model}
	}
	memory := must(codeoid.Open(codeoid.Config{DBPath: filepath.Join(dir, "codeoid.db"), WorkspaceDir: workspace, Embeddings: embeddings}))
	defer memory.Close()

	session := must(memory.StartSession(codeoid.SessionOptions{ID: "ses_quickstart", Name: "schema bug"}))
	for n := 1; n <= 5; n++ {
		call := fmt.Sprintf("toolu_%d", n)
		usage := &codeoid.Usage{Calls: []codeoid.CallUsage{{InputTokens: uint64(40000 + 10000*n), OutputTokens: 90}}}
		turns := []codeoid.Turn{
			{ID: fmt.Sprintf("u%d", n), Role: "user", Parts: []codeoid.Part{codeoid.TextPart(fmt.Sprintf("Why does migration %d fail?", n))}},
			{ID: fmt.Sprintf("a%d", n), Role: "assistant", Model: "claude-sonnet-4-5", Usage: usage, Parts: []codeoid.Part{
				must(codeoid.ToolCallPart(call, "Read", map[string]string{"file_path": "src/store/schema.rs"}))}},
			{ID: fmt.Sprintf("r%d", n), Role: "user", Parts: []codeoid.Part{codeoid.ToolResultPart(call, fmt.Sprintf("const SCHEMA_VERSION: u32 = %d;", n), false)}},
			{ID: fmt.Sprintf("f%d", n), Role: "assistant", Model: "claude-sonnet-4-5", Usage: usage, Parts: []codeoid.Part{codeoid.TextPart("user_version is bumped too early.")}},
		}
		for _, turn := range turns {
			must(memory.RecordTurn(session.ID, turn))
		}
	}
	fmt.Println("recorded 20 turns")

	page := must(memory.Timeline(codeoid.TimelineQuery{Limit: 3}))
	check(len(page.Episodes) == 3, "timeline page of 3, got %d", len(page.Episodes))
	text := must(memory.EpisodeText(session.ID, page.Episodes[0].ID))
	fmt.Printf("newest episode (%s):\n%s\n", page.Episodes[0].Summary, text)

	// Recall, then the memory tools by name: a harness declares ToolSchemas for its provider and
	// hands each call the model makes of one of them to CallTool.
	check(must(memory.Flush(time.Minute)), "every episode embedded (at once without a model)")
	hits := must(memory.Recall("", "SCHEMA_VERSION", &codeoid.RecallOptions{Limit: 2}))
	check(len(hits) == 2, "two hits, got %d", len(hits))
	fmt.Printf("recall: %s (score %.2f, bm25 %.2f, vec %.2f)\n", hits[0].Summary, hits[0].Score, hits[0].Components.BM25, hits[0].Components.Vec)
	specs := must(memory.ToolSchemas("codeoid_memory"))
	declared := must(codeoid.DeclareTools(codeoid.Anthropic, specs, nil))
	fmt.Printf("declared %d memory tools for Anthropic (%d bytes)\n", len(specs), len(declared.Tools))
	out := must(memory.CallTool(session.ID, "codeoid_memory__get_episode", fmt.Sprintf(`{"episode_id": %q}`, hits[0].ID)))
	check(!out.IsError && strings.Contains(out.Text, "SCHEMA_VERSION"), "get_episode by name: %+v", out)
	out = must(memory.CallTool(session.ID, "recall_file", `{"path": "src/store/schema.rs"}`))
	check(!out.IsError, "recall_file by name: %s", out.Text)
	out = must(memory.CallTool(session.ID, "forget", "{}"))
	check(out.IsError, "an unknown tool is an error result for the model")
	fmt.Println("unknown tool, told to the model:", out.Text)
	status := must(memory.EmbeddingStatus())
	fmt.Printf("embeddings: %s, warnings: %v\n", status.Phase, must(memory.Warnings()))

	index := must(memory.WorkspaceIndex(session.ID))
	check(strings.Contains(index, "src/store/schema.rs"), "hot file in the index")
	fmt.Println(index)

	decision := must(memory.RotationDecision(session.ID))
	fmt.Printf("rotation decision: %s (%s)\n", decision.Reason, decision.Message)
	must(memory.Rotate(session.ID, ""))
	seed := must(memory.TakeSeed(session.ID))
	check(seed != nil && strings.Contains(seed.Text, "migration 5"), "seed anchored on the last prompt")
	fmt.Printf("seed for rotation #%d: %d characters\n", seed.Rotation, len(seed.Text))

	compressed := must(memory.Compress("git status", []byte(strings.Repeat("?? build/cache/file.o\n", 400)+"On branch main\n")))
	if compressed != nil {
		fmt.Printf("compressed git status: %d -> %d bytes (%s)\n", compressed.BytesIn, compressed.BytesOut, compressed.Rule)
	}

	forked := must(memory.Fork(session.ID, codeoid.Tip, codeoid.Gemini, "gemini-2.5-pro", "schema bug on gemini", nil))
	check(forked.CopiedTurns == 20 && forked.Handoff != nil, "fork copies every turn and hands them over")
	fmt.Printf("forked to %s: %d turns, %d bytes of Gemini contents\n", forked.Session.ID, forked.CopiedTurns, len(forked.Handoff.Messages))

	turns := []codeoid.Turn{{Role: "user", Parts: []codeoid.Part{codeoid.TextPart("continue on gemini")}}}
	gemini := must(codeoid.ToMessages(codeoid.Gemini, "gemini-2.5-pro", turns, nil))
	fmt.Printf("gemini contents: %s\n", gemini.Messages)

	_, err := memory.Episode("ep_does_not_exist")
	check(errors.Is(err, codeoid.ErrNotFound), "not found error, got %v", err)
	fmt.Println("expected error:", err)
	fmt.Println("quickstart: all checks passed")
}
