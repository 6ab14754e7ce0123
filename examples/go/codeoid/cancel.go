package codeoid

/*
#include "codeoid.h"
*/
import "C"

import (
	"context"
	"errors"
	"time"
)

// withCancel runs f with a C cancel flag that is raised when ctx is done. A context already
// done is returned at once, without calling f; CodeCancelled (the context ended between that
// check and the call) comes back as the context's error.
func withCancel(ctx context.Context, f func(flag *C.codeoid_cancel) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	flag := C.codeoid_cancel_new()
	if flag == nil {
		return &Error{code: CodePanic, message: "codeoid_cancel_new failed"}
	}
	raised := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		C.codeoid_cancel_request(flag)
		close(raised)
	})
	// Deferred as one step, so that even when f panics the raise is unregistered (or, if it
	// already started, finished) before the flag is freed.
	defer func() {
		if !stop() {
			<-raised
		}
		C.codeoid_cancel_free(flag)
	}()
	return asContextError(ctx, f(flag))
}

// asContextError returns ctx's error for a call the C ABI reports as cancelled: its flag is
// raised only when ctx is done. Any other outcome, and a cancelled call while ctx is somehow
// still live, keeps its own error, so that no failure turns into a nil.
func asContextError(ctx context.Context, err error) error {
	if errors.Is(err, ErrCancelled) {
		if done := ctx.Err(); done != nil {
			return done
		}
	}
	return err
}

// RunContext is Run that stops when ctx is done: the command (in a process group of its own)
// gets SIGINT, as from a Ctrl-C, what is left of it is killed a second later, what it printed
// is stored, and the output comes back with Interrupted set together with ctx.Err(). A context
// already done runs nothing and returns ctx.Err(). The memory's RunTimeoutSecs still applies
// (RunOutput.TimedOut); a context deadline interrupts instead.
func (m *Memory) RunContext(ctx context.Context, sessionID, command string) (RunOutput, error) {
	return m.runContext(ctx, sessionID, command, nil)
}

// RunWithTimeoutContext is RunContext with this call's own timeout in place of
// Config.RunTimeoutSecs, as in RunWithTimeout.
func (m *Memory) RunWithTimeoutContext(ctx context.Context, sessionID, command string, timeout time.Duration) (RunOutput, error) {
	secs := C.double(timeout.Seconds())
	return m.runContext(ctx, sessionID, command, &secs)
}

func (m *Memory) runContext(ctx context.Context, sessionID, command string, timeout *C.double) (RunOutput, error) {
	var run RunOutput
	sp, sl := text(sessionID)
	cp, cl := text(command)
	err := withCancel(ctx, func(flag *C.codeoid_cancel) error {
		return m.callJSON(&run, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
			return C.codeoid_memory_run_cancellable(p, sp, sl, cp, cl, timeout, flag, s)
		})
	})
	if err == nil && run.Interrupted {
		err = ctx.Err()
	}
	return run, err
}

// ImportContext is Import that stops when ctx is done: the context is checked before each
// file, and once it is done the import ends there and returns its summary (Stopped set) with
// ctx.Err(). Every file read before is stored whole, and importing again goes on from there.
// A context already done reads nothing and returns ctx.Err().
func (m *Memory) ImportContext(ctx context.Context, path string, options *ImportOptions) (ImportSummary, error) {
	var summary ImportSummary
	var optionsJSON string
	if options != nil {
		var err error
		if optionsJSON, err = optionalJSON(options); err != nil {
			return summary, err
		}
	}
	pp, pl := text(path)
	op, ol := optionalText(optionsJSON)
	err := withCancel(ctx, func(flag *C.codeoid_cancel) error {
		return m.callJSON(&summary, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
			return C.codeoid_memory_import_cancellable(p, pp, pl, op, ol, flag, s)
		})
	})
	if err == nil && summary.Stopped {
		err = ctx.Err()
	}
	return summary, err
}
