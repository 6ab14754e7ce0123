package codeoid

/*
#include "codeoid.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Memory is session memory for one workspace: an open store bound to a workspace. Safe for
// concurrent use by many goroutines. Close it when done.
type Memory struct {
	// mu guards ptr: calls hold it for reading, Close for writing, so Close waits for calls in
	// flight and a call after Close sees nil instead of a freed handle.
	mu  sync.RWMutex
	ptr *C.codeoid_memory
	// closing is set before Close waits for mu: a call that starts meanwhile returns ErrClosed
	// at once instead of queueing behind Close (a waiting writer blocks new readers).
	closing atomic.Bool
}

// Open opens (creating if needed) the store and binds it to a workspace.
func Open(config Config) (*Memory, error) {
	configJSON, err := optionalJSON(config)
	if err != nil {
		return nil, err
	}
	cp, cl := text(configJSON)
	var ptr *C.codeoid_memory
	if err := takeError(C.codeoid_memory_open(cp, cl, &ptr)); err != nil {
		return nil, err
	}
	m := &Memory{ptr: ptr}
	// A backstop only: a finalizer runs at an unpredictable time, if ever.
	runtime.SetFinalizer(m, func(m *Memory) { _ = m.Close() })
	return m, nil
}

// Close closes the store. It waits for calls in flight, and is idempotent: later calls of
// Close do nothing and other methods return ErrClosed.
func (m *Memory) Close() error {
	m.closing.Store(true)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr != nil {
		C.codeoid_memory_free(m.ptr)
		m.ptr = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// call runs f with the live handle, or returns ErrClosed.
func (m *Memory) call(f func(p *C.codeoid_memory) error) error {
	if m.closing.Load() {
		return ErrClosed
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.ptr == nil {
		return ErrClosed
	}
	err := f(m.ptr)
	runtime.KeepAlive(m)
	return err
}

// callJSON runs a function that fills an out-string with JSON and decodes it into out.
func (m *Memory) callJSON(out any, f func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error) error {
	return m.call(func(p *C.codeoid_memory) error {
		var s C.codeoid_string
		if err := takeError(f(p, &s)); err != nil {
			return err
		}
		return decodeOut(&s, out)
	})
}

// callText runs a function that fills an out-string with text.
func (m *Memory) callText(f func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error) (string, error) {
	var out string
	err := m.call(func(p *C.codeoid_memory) error {
		var s C.codeoid_string
		if err := takeError(f(p, &s)); err != nil {
			return err
		}
		out = takeString(&s)
		return nil
	})
	return out, err
}

// Workspace describes the workspace this memory is bound to.
func (m *Memory) Workspace() (Workspace, error) {
	var w Workspace
	err := m.callJSON(&w, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_workspace(p, s)
	})
	return w, err
}

// StartSession starts a session (or returns the existing one with options.ID).
func (m *Memory) StartSession(options SessionOptions) (Session, error) {
	var session Session
	optionsJSON, err := optionalJSON(options)
	if err != nil {
		return session, err
	}
	op, ol := text(optionsJSON)
	err = m.callJSON(&session, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_start_session(p, op, ol, s)
	})
	return session, err
}

// Session returns session id of this workspace.
func (m *Memory) Session(id string) (Session, error) {
	var session Session
	ip, il := text(id)
	err := m.callJSON(&session, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_session(p, ip, il, s)
	})
	return session, err
}

// Sessions lists every session of this workspace, oldest first.
func (m *Memory) Sessions() ([]Session, error) {
	var sessions []Session
	err := m.callJSON(&sessions, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_sessions(p, s)
	})
	return sessions, err
}

// FinishSession closes a session and returns the ids of the episodes this wrote.
func (m *Memory) FinishSession(id string) ([]string, error) {
	var ids []string
	ip, il := text(id)
	err := m.callJSON(&ids, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_finish_session(p, ip, il, s)
	})
	return ids, err
}

// RecordTurn records one turn and, for an assistant turn, asks the rotation policy about it.
func (m *Memory) RecordTurn(sessionID string, turn Turn) (TurnOutcome, error) {
	var outcome TurnOutcome
	turnJSON, err := optionalJSON(turn)
	if err != nil {
		return outcome, err
	}
	sp, sl := text(sessionID)
	tp, tl := text(turnJSON)
	err = m.callJSON(&outcome, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_record_turn(p, sp, sl, tp, tl, s)
	})
	return outcome, err
}

// RecordTurns records turns in one transaction, without evaluating rotation.
func (m *Memory) RecordTurns(sessionID string, turns []Turn) ([]Recorded, error) {
	var recorded []Recorded
	if turns == nil {
		turns = []Turn{}
	}
	turnsJSON, err := optionalJSON(turns)
	if err != nil {
		return nil, err
	}
	sp, sl := text(sessionID)
	tp, tl := text(turnsJSON)
	err = m.callJSON(&recorded, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_record_turns(p, sp, sl, tp, tl, s)
	})
	return recorded, err
}

// Episode returns episode id of this workspace, content byte for byte.
func (m *Memory) Episode(id string) (Episode, error) {
	var episode Episode
	ip, il := text(id)
	err := m.callJSON(&episode, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_episode(p, ip, il, s)
	})
	return episode, err
}

// EpisodeText is what get_episode shows a model, with sessions labelled relative to
// currentSession ("" for none).
func (m *Memory) EpisodeText(currentSession, id string) (string, error) {
	cp, cl := optionalText(currentSession)
	ip, il := text(id)
	return m.callText(func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_episode_text(p, cp, cl, ip, il, s)
	})
}

// Timeline returns one page of this workspace's timeline, newest first.
func (m *Memory) Timeline(query TimelineQuery) (TimelinePage, error) {
	var page TimelinePage
	queryJSON, err := optionalJSON(query)
	if err != nil {
		return page, err
	}
	qp, ql := text(queryJSON)
	err = m.callJSON(&page, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_timeline(p, qp, ql, s)
	})
	return page, err
}

// TimelineText is the timeline tool's text for a page.
func (m *Memory) TimelineText(currentSession string, query TimelineQuery) (string, error) {
	queryJSON, err := optionalJSON(query)
	if err != nil {
		return "", err
	}
	cp, cl := optionalText(currentSession)
	qp, ql := text(queryJSON)
	return m.callText(func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_timeline_text(p, cp, cl, qp, ql, s)
	})
}

// Blob returns the exact bytes of a raw blob.
func (m *Memory) Blob(id string) ([]byte, error) {
	var out []byte
	ip, il := text(id)
	err := m.call(func(p *C.codeoid_memory) error {
		var s C.codeoid_string
		if err := takeError(C.codeoid_memory_blob(p, ip, il, &s)); err != nil {
			return err
		}
		out = takeBytes(&s)
		return nil
	})
	return out, err
}

// RotationDecision is the policy's verdict on the session's latest assistant turn.
func (m *Memory) RotationDecision(sessionID string) (Decision, error) {
	var decision Decision
	sp, sl := text(sessionID)
	err := m.callJSON(&decision, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_rotation_decision(p, sp, sl, s)
	})
	return decision, err
}

// Rotate rotates the session now; backingContextID "" mints one.
func (m *Memory) Rotate(sessionID, backingContextID string) (Rotation, error) {
	var rotation Rotation
	sp, sl := text(sessionID)
	bp, bl := optionalText(backingContextID)
	err := m.callJSON(&rotation, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_rotate(p, sp, sl, bp, bl, s)
	})
	return rotation, err
}

// TakeSeed returns the pending seed once after each rotation, nil otherwise.
func (m *Memory) TakeSeed(sessionID string) (*SeedBlock, error) {
	var seed *SeedBlock
	sp, sl := text(sessionID)
	err := m.callJSON(&seed, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_take_seed(p, sp, sl, s)
	})
	return seed, err
}

// SetContextWindow overrides the session's context window; 0 clears the override.
func (m *Memory) SetContextWindow(sessionID string, tokens uint64) error {
	sp, sl := text(sessionID)
	return m.call(func(p *C.codeoid_memory) error {
		return takeError(C.codeoid_memory_set_context_window(p, sp, sl, C.uint64_t(tokens)))
	})
}

// WorkspaceIndex is the workspace index block for a system prompt, as seen from sessionID
// ("" for none).
func (m *Memory) WorkspaceIndex(sessionID string) (string, error) {
	sp, sl := optionalText(sessionID)
	return m.callText(func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_workspace_index(p, sp, sl, s)
	})
}

// Compress compresses a command's stdout; nil when no rule saves enough.
func (m *Memory) Compress(command string, stdout []byte) (*Compressed, error) {
	var compressed *Compressed
	cp, cl := text(command)
	op, ol := rawBytes(stdout)
	err := m.callJSON(&compressed, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_compress(p, cp, cl, op, ol, s)
	})
	runtime.KeepAlive(stdout)
	return compressed, err
}

// Run runs command with sh -c in the workspace root, storing its raw output as an episode of
// sessionID before compressing it.
func (m *Memory) Run(sessionID, command string) (RunOutput, error) {
	return m.RunContext(context.Background(), sessionID, command)
}

// RunWithTimeout is Run with this call's own timeout in place of Config.RunTimeoutSecs: a
// command still running after timeout is killed with everything it started, and RunOutput.TimedOut
// says so; 0 waits as long as it runs. A negative timeout, or one over 10^9 seconds (about 31
// years; math.MaxInt64 is more), is ErrInvalidInput.
func (m *Memory) RunWithTimeout(sessionID, command string, timeout time.Duration) (RunOutput, error) {
	return m.RunWithTimeoutContext(context.Background(), sessionID, command, timeout)
}
