package codeoid_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/codeoid/codeoid/examples/go/codeoid"
)

// encoding/json turns bytes that are not UTF-8 into U+FFFD and Part.MarshalJSON writes only its
// type's fields: both would store something other than what the harness gave, without a word.
func TestTextThatJSONWouldAlterIsRefusedAndNothingIsStored(t *testing.T) {
	m := open(t)
	session, err := m.StartSession(codeoid.SessionOptions{ID: "ses_check"})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error, code codeoid.Code, names string) {
		t.Helper()
		var got codeoid.Code
		if !errors.Is(err, code) || !errors.As(err, &got) || got != code || !strings.Contains(err.Error(), names) {
			t.Fatalf("%s: want %v naming %q, got %v", what, code, names, err)
		}
	}

	binary := codeoid.Turn{ID: "r1", Role: "user", Parts: []codeoid.Part{
		codeoid.ToolResultPart("c1", "latin-1 caf\xe9", false)}}
	_, err = m.RecordTurn(session.ID, binary)
	refused("invalid UTF-8 in a tool result", err, codeoid.CodeInvalidUTF8, "Turn.Parts[0].Parts[0].Text")
	_, err = m.RecordTurns(session.ID, []codeoid.Turn{exchange(1, 100)[0], binary})
	refused("invalid UTF-8 in a batch", err, codeoid.CodeInvalidUTF8, "[]Turn[1].Parts[0].Parts[0].Text")
	_, err = m.StartSession(codeoid.SessionOptions{Name: "bad\xffname"})
	refused("invalid UTF-8 in a session name", err, codeoid.CodeInvalidUTF8, "Name")
	_, err = codeoid.ToolCallPart("c2", "Write", map[string]string{"content": "\xfe"})
	refused("invalid UTF-8 in a tool call's input", err, codeoid.CodeInvalidUTF8, "input of tool call c2")

	misplaced := codeoid.Turn{ID: "r2", Role: "user", Parts: []codeoid.Part{
		{Type: "tool_result", CallID: "c1", Text: "file_a.go\nfile_b.go"}}}
	_, err = m.RecordTurn(session.ID, misplaced)
	refused("a tool result's output in Text", err, codeoid.CodeInvalidInput, "ToolResultPart")
	_, err = m.RecordTurn(session.ID, codeoid.Turn{ID: "u3", Role: "user", Parts: []codeoid.Part{
		{Type: "text", Text: "hi", IsError: true}}})
	refused("a text part with IsError", err, codeoid.CodeInvalidInput, "no field IsError")

	turns, err := m.Turns(session.ID, 0, codeoid.AllTurns)
	if err != nil || len(turns) != 0 {
		t.Fatalf("nothing refused was stored: %d turns, %v", len(turns), err)
	}
	// Valid text, NUL bytes included, is kept as it is.
	kept := "x\x00y caf\u00e9"
	if _, err := m.RecordTurn(session.ID, codeoid.Turn{ID: "u4", Role: "user", Parts: []codeoid.Part{codeoid.TextPart(kept)}}); err != nil {
		t.Fatal(err)
	}
	turns, err = m.Turns(session.ID, 0, codeoid.AllTurns)
	if err != nil || len(turns) != 1 || turns[0].Parts[0].Text != kept {
		t.Fatalf("kept text: %+v, %v", turns, err)
	}
}
