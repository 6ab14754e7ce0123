//go:build codeoid_repo

package sqlitealongside_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeoid/codeoid/examples/go/codeoid"
	"github.com/codeoid/codeoid/examples/go/internal/sqlitealongside"
)

func TestTheSystemSQLiteAndCodeoidInOneProgram(t *testing.T) {
	if got := sqlitealongside.LibVersion(); got != sqlitealongside.HeaderVersion {
		t.Fatalf("the program's sqlite3_* calls reach SQLite %s, not the system's %s", got, sqlitealongside.HeaderVersion)
	}
	if got := sqlitealongside.RoundTrip(); got != "mine" {
		t.Fatalf("the system SQLite read back %q", got)
	}

	dir := t.TempDir()
	m, err := codeoid.Open(codeoid.Config{DBPath: filepath.Join(dir, "codeoid.db"), WorkspaceDir: dir, Embeddings: codeoid.NoEmbeddings()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.StartSession(codeoid.SessionOptions{ID: "ses_alongside"}); err != nil {
		t.Fatal(err)
	}
	call, err := codeoid.ToolCallPart("c1", "Bash", map[string]string{"command": "cargo test parser"})
	if err != nil {
		t.Fatal(err)
	}
	for _, turn := range []codeoid.Turn{
		{ID: "u1", Role: "user", Parts: []codeoid.Part{codeoid.TextPart("why is the parser test flaky?")}},
		{ID: "a1", Role: "assistant", Parts: []codeoid.Part{call}},
		{ID: "r1", Role: "user", Parts: []codeoid.Part{codeoid.ToolResultPart("c1", "test parser::flaky_tokens ... FAILED", false)}},
	} {
		if _, err := m.RecordTurn("ses_alongside", turn); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := m.Recall("", "flaky_tokens", nil)
	if err != nil || len(hits) == 0 || !strings.Contains(hits[0].Content, "flaky_tokens") {
		t.Fatalf("recall through codeoid's SQLite: %+v %v", hits, err)
	}
	if got := sqlitealongside.LibVersion(); got != sqlitealongside.HeaderVersion {
		t.Fatalf("after codeoid ran, sqlite3_libversion() is %s", got)
	}
}
