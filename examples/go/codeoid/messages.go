package codeoid

/*
#include "codeoid.h"
*/
import "C"

import (
	"encoding/json"
	"math"
	"runtime"
)

// AllTurns, as Turns' end, reads to the last turn.
const AllTurns uint64 = math.MaxUint64

// RecordMessage records one provider message (an Anthropic or OpenAI Chat message, an OpenAI
// Responses input item, a Gemini contents entry) as RecordTurn records a canonical turn,
// rotation decision included. Assistant turns are stamped with the format's provider and model
// ("" for none); usage (nil for none) is that of the call that produced an assistant message.
// Gemini calls without ids get ids unique within the session, and a response without an id
// pairs with the first call of its name in the latest model message that no response answered
// yet.
func (m *Memory) RecordMessage(sessionID string, format Format, model string, message json.RawMessage, usage *Usage) (TurnOutcome, error) {
	var usageJSON json.RawMessage
	if usage != nil {
		encoded, err := optionalJSON(usage)
		if err != nil {
			return TurnOutcome{}, err
		}
		usageJSON = json.RawMessage(encoded)
	}
	return m.RecordMessageRawUsage(sessionID, format, model, message, usageJSON)
}

// RecordMessageRawUsage is RecordMessage with usage as JSON (nil or empty for none): the
// canonical Usage object, or the provider's own usage object in format as its SDK returns it
// (Anthropic "usage", OpenAI "usage", Gemini "usageMetadata"), cached input counted once. An
// Anthropic response passed whole as message brings its own usage when usage is nil.
func (m *Memory) RecordMessageRawUsage(sessionID string, format Format, model string, message, usage json.RawMessage) (TurnOutcome, error) {
	var outcome TurnOutcome
	sp, sl := text(sessionID)
	mp, ml := optionalText(model)
	jp, jl := rawBytes(message)
	up, ul := optionalText(string(usage))
	err := m.callJSON(&outcome, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_record_message(p, sp, sl, C.uint32_t(format), mp, ml, jp, jl, up, ul, s)
	})
	runtime.KeepAlive(message)
	return outcome, err
}

// RecordMessages records a provider message list, translated as a whole so results pair with
// their calls, in one transaction and without evaluating rotation (as RecordTurns).
func (m *Memory) RecordMessages(sessionID string, format Format, model string, messages json.RawMessage) ([]Recorded, error) {
	var recorded []Recorded
	sp, sl := text(sessionID)
	mp, ml := optionalText(model)
	jp, jl := rawBytes(messages)
	err := m.callJSON(&recorded, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_record_messages(p, sp, sl, C.uint32_t(format), mp, ml, jp, jl, s)
	})
	runtime.KeepAlive(messages)
	return recorded, err
}

// Turns returns the session's canonical turns with sequence numbers in [start, end) (AllTurns
// for the last): what a harness that restarts rebuilds its conversation from.
func (m *Memory) Turns(sessionID string, start, end uint64) ([]Turn, error) {
	var turns []Turn
	sp, sl := text(sessionID)
	err := m.callJSON(&turns, func(p *C.codeoid_memory, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_memory_turns(p, sp, sl, C.uint64_t(start), C.uint64_t(end), s)
	})
	return turns, err
}
