package codeoid

import (
	"context"
	"errors"
	"testing"
)

// The C ABI's CANCELLED comes back only when the flag was raised between withCancel's check of
// the context and the call, a race no test can time, so the mapping is checked on its own.
func TestACancelledCallReportsTheContextsError(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := asContextError(cancelled, &Error{code: CodeCancelled}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call of a done context: %v", err)
	}
	other := &Error{code: CodeBusy, message: "busy"}
	if err := asContextError(cancelled, other); err != other {
		t.Fatalf("other errors are kept: %v", err)
	}
	if err := asContextError(cancelled, nil); err != nil {
		t.Fatalf("success stays success: %v", err)
	}
	live := context.Background()
	if err := asContextError(live, &Error{code: CodeCancelled}); !errors.Is(err, ErrCancelled) {
		t.Fatalf("a cancelled call never becomes nil: %v", err)
	}
}
