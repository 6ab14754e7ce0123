package codeoid

/*
#include "codeoid.h"
*/
import "C"

import (
	"time"
)

// Recall returns the episodes of this workspace most relevant to query (a question, an error
// message, an identifier, a path), best first, as seen from currentSession ("" for none: nothing
// is excluded; otherwise that session's live context, its episodes since its last rotation, is
// left out unless options.IncludeCurrentSession). options may be nil for the defaults (6 hits).
func (m *Memory) Recall(currentSession, query string, options *RecallOptions) ([]Hit, error) {
	var hits []Hit
	var optionsJSON string
	if options != nil {
		var err error
		if optionsJSON, err = optionalJSON(options); err != nil {
			return nil, err
		}
	}
	cp, cl := optionalText(currentSession)
	qp, ql := text(query)
	op, ol := optionalText(optionsJSON)
	err := m.callJSON(&hits, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_recall(p, cp, cl, qp, ql, op, ol, s)
	})
	return hits, err
}

// RecallFile returns the most recent read of path (relative to the workspace root, or absolute)
// in any session of this workspace, and whether the file changed since; nil when memory has none.
func (m *Memory) RecallFile(path string) (*FileRecall, error) {
	var found *FileRecall
	pp, pl := text(path)
	err := m.callJSON(&found, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_recall_file(p, pp, pl, s)
	})
	return found, err
}

// CallTool answers a model's call of memory tool name (recall, recall_file, timeline or
// get_episode, bare or prefixed as in codeoid_memory__recall) made in currentSession ("" for
// none), with arguments as the model sent them ("" for none). A failed tool call (bad arguments,
// an unknown name, a missing episode) is not an error: it is a ToolOutput with IsError set and a
// text that tells the model what to do. The error is for ErrClosed and the like.
func (m *Memory) CallTool(currentSession, name, arguments string) (ToolOutput, error) {
	var out ToolOutput
	cp, cl := optionalText(currentSession)
	np, nl := text(name)
	ap, al := optionalText(arguments)
	err := m.call(func(p *C.codeoid_memory) error {
		var s C.codeoid_string
		var isError C.bool
		if err := takeError(C.codeoid_memory_call_tool(p, cp, cl, np, nl, ap, al, &s, &isError)); err != nil {
			return err
		}
		out = ToolOutput{Text: takeString(&s), IsError: bool(isError)}
		return nil
	})
	return out, err
}

// ToolSchemas returns the four memory tools' declarations, named prefix__name when prefix is
// not "". Declare them for a provider with DeclareTools or as Request.Tools of ToRequest.
func (m *Memory) ToolSchemas(prefix string) ([]ToolSpec, error) {
	var specs []ToolSpec
	pp, pl := optionalText(prefix)
	err := m.callJSON(&specs, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_tool_schemas(p, pp, pl, s)
	})
	return specs, err
}

// Flush waits until every episode recorded before the call is embedded and searchable by
// meaning, for at most timeout (negative: no limit; 0: only check). It reports false when the
// timeout passed first, and true at once when embeddings are off or no model is available.
func (m *Memory) Flush(timeout time.Duration) (bool, error) {
	ms := int64(-1)
	if timeout >= 0 {
		// Rounded up: a positive timeout under a millisecond still waits.
		ms = int64((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	var flushed C.bool
	err := m.call(func(p *C.codeoid_memory) error {
		return takeError(C.codeoid_memory_flush(p, C.int64_t(ms), &flushed))
	})
	return bool(flushed), err
}

// EmbeddingStatus reports the embedding worker's progress.
func (m *Memory) EmbeddingStatus() (EmbeddingStatus, error) {
	var status EmbeddingStatus
	err := m.callJSON(&status, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_embedding_status(p, s)
	})
	return status, err
}

// Warnings are the messages to show the person once: why recall is lexical only, episodes the
// model failed on, store errors the embedding worker is retrying. Empty when all is well.
func (m *Memory) Warnings() ([]string, error) {
	var warnings []string
	err := m.callJSON(&warnings, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_warnings(p, s)
	})
	return warnings, err
}
