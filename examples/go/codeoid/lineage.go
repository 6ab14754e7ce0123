package codeoid

/*
#include "codeoid.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
)

// SameBackend keeps a fork on the parent's backend (no handoff).
const SameBackend Format = C.CODEOID_FORMAT_NONE

// Tip forks at the parent's latest turn.
const Tip int64 = -1

// ForkOptions are the options of Memory.Fork (docs/fork.md); nil fields keep the defaults.
type ForkOptions struct {
	// ID of the new session; "" mints one.
	ID string `json:"id,omitempty"`
	// Handoff sizes and translates the conversation for the target: budget_fraction,
	// budget_tokens, context_window, translate (translation options).
	Handoff map[string]any `json:"handoff,omitempty"`
}

// Handoff is the conversation prepared for the target backend.
type Handoff struct {
	Backend       map[string]any  `json:"backend"`
	ContextWindow Window          `json:"context_window"`
	BudgetTokens  uint64          `json:"budget_tokens"`
	Window        map[string]any  `json:"window"`
	OmittedTurns  int             `json:"omitted_turns"`
	Seed          *string         `json:"seed"`
	Turns         []Turn          `json:"turns"`
	Messages      json.RawMessage `json:"messages"`
	Losses        []Loss          `json:"losses"`
}

// Forked is what a fork created.
type Forked struct {
	Session     Session  `json:"session"`
	CopiedTurns uint64   `json:"copied_turns"`
	EpisodeID   string   `json:"episode_id"`
	Handoff     *Handoff `json:"handoff"`
}

// Fork copies session sessionID up to turn atTurn (Tip for all) into a new session called
// name, optionally handed to target (SameBackend for none) and model. The parent is untouched.
func (m *Memory) Fork(sessionID string, atTurn int64, target Format, model, name string, options *ForkOptions) (Forked, error) {
	var forked Forked
	var optionsJSON string
	if options != nil {
		var err error
		if optionsJSON, err = optionalJSON(options); err != nil {
			return forked, err
		}
	}
	sp, sl := text(sessionID)
	mp, ml := optionalText(model)
	np, nl := text(name)
	op, ol := optionalText(optionsJSON)
	err := m.callJSON(&forked, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_fork(p, sp, sl, C.int64_t(atTurn), C.uint32_t(target), mp, ml, np, nl, op, ol, s)
	})
	return forked, err
}

// ImportOptions are the options of Memory.Import; zero values keep the defaults.
type ImportOptions struct {
	Tenant       string
	WorkspaceDir string
	FallbackDir  string
	// FinishAfterSecs finishes sessions idle that long (0: every session); nil keeps the
	// default, 600.
	FinishAfterSecs *uint64
	// NeverFinish leaves every imported session open (finish_after_secs null in the C API);
	// it cannot be combined with FinishAfterSecs.
	NeverFinish bool
	BatchTurns  int
}

// MarshalJSON writes the options of codeoid_memory_import: only the fields set, and
// "finish_after_secs": null for NeverFinish.
func (o ImportOptions) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if o.Tenant != "" {
		m["tenant"] = o.Tenant
	}
	if o.WorkspaceDir != "" {
		m["workspace_dir"] = o.WorkspaceDir
	}
	if o.FallbackDir != "" {
		m["fallback_dir"] = o.FallbackDir
	}
	switch {
	case o.NeverFinish && o.FinishAfterSecs != nil:
		return nil, errors.New("codeoid: ImportOptions has both NeverFinish and FinishAfterSecs; set one")
	case o.NeverFinish:
		m["finish_after_secs"] = nil
	case o.FinishAfterSecs != nil:
		m["finish_after_secs"] = *o.FinishAfterSecs
	}
	if o.BatchTurns != 0 {
		m["batch_turns"] = o.BatchTurns
	}
	return json.Marshal(m)
}

// SkippedSession is a session read from a log but not stored, and why.
type SkippedSession struct {
	SessionID string `json:"session_id"`
	// SourcePath is the log's path; bytes of a file name that are not UTF-8 are U+FFFD.
	SourcePath string `json:"source_path"`
	Reason     string `json:"reason"`
}

// ImportSummary is what an import changed (docs/import.md).
type ImportSummary struct {
	Report            json.RawMessage  `json:"report"`
	SessionsNew       uint64           `json:"sessions_new"`
	SessionsUpdated   uint64           `json:"sessions_updated"`
	SessionsUnchanged uint64           `json:"sessions_unchanged"`
	SessionsEmpty     uint64           `json:"sessions_empty"`
	SessionsSkipped   uint64           `json:"sessions_skipped"`
	SkippedSessions   []SkippedSession `json:"skipped_sessions"`
	SessionsFinished  uint64           `json:"sessions_finished"`
	TurnsAdded        uint64           `json:"turns_added"`
	TurnsUnchanged    uint64           `json:"turns_unchanged"`
	TurnsReplaced     uint64           `json:"turns_replaced"`
	EpisodesAdded     uint64           `json:"episodes_added"`
	EpisodesRemoved   uint64           `json:"episodes_removed"`
	// Stopped is true when ImportContext's context ended before every file was read; importing
	// again goes on from there.
	Stopped bool `json:"stopped"`
}

// Import imports session logs (Claude Code, Codex CLI, Gemini CLI, SWE-agent; a file or a
// folder) into the store. Re-importing adds nothing.
func (m *Memory) Import(path string, options *ImportOptions) (ImportSummary, error) {
	return m.ImportContext(context.Background(), path, options)
}
