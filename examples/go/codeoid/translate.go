package codeoid

/*
#include "codeoid.h"
*/
import "C"

import (
	"encoding/json"
)

// Format is a provider wire format.
type Format uint32

// The formats codeoid translates to and from.
const (
	Anthropic       Format = C.CODEOID_FORMAT_ANTHROPIC
	OpenAIChat      Format = C.CODEOID_FORMAT_OPENAI_CHAT
	OpenAIResponses Format = C.CODEOID_FORMAT_OPENAI_RESPONSES
	Gemini          Format = C.CODEOID_FORMAT_GEMINI
)

// Loss is something a translation did not carry unchanged, and where (docs/translate.md).
type Loss struct {
	Location map[string]any `json:"location"`
	Kind     string         `json:"kind"`
	What     string         `json:"what"`
}

// Messages is a translated message list.
type Messages struct {
	Messages json.RawMessage `json:"messages"`
	Losses   []Loss          `json:"losses"`
}

// Conversation is a message list read back into canonical turns.
type Conversation struct {
	System *string `json:"system"`
	Turns  []Turn  `json:"turns"`
	Losses []Loss  `json:"losses"`
}

// Request is a conversation with its system prompt and tools.
type Request struct {
	System string     `json:"system,omitempty"`
	Turns  []Turn     `json:"turns"`
	Tools  []ToolSpec `json:"tools,omitempty"`
}

// ToolSpec declares a tool the model may call.
type ToolSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

// RequestBody is a provider request body (without sampling parameters).
type RequestBody struct {
	Body   json.RawMessage `json:"body"`
	Losses []Loss          `json:"losses"`
}

// translateCall runs a translate function with format, model, one JSON argument and options.
func translateCall(out any, arg any, options map[string]any,
	f func(mp *C.char, ml C.size_t, ap *C.char, al C.size_t, op *C.char, ol C.size_t, s *C.codeoid_string) *C.codeoid_error,
	model string) error {
	argJSON, err := optionalJSON(arg)
	if err != nil {
		return err
	}
	var optionsJSON string
	if options != nil {
		if optionsJSON, err = optionalJSON(options); err != nil {
			return err
		}
	}
	mp, ml := optionalText(model)
	ap, al := text(argJSON)
	op, ol := optionalText(optionsJSON)
	var s C.codeoid_string
	if err := takeError(f(mp, ml, ap, al, op, ol, &s)); err != nil {
		return err
	}
	return decodeOut(&s, out)
}

// ToMessages translates canonical turns into format's message list for model ("" if unknown).
// options (nil for the defaults) are the translation options of docs/translate.md.
func ToMessages(format Format, model string, turns []Turn, options map[string]any) (Messages, error) {
	var out Messages
	if turns == nil {
		turns = []Turn{}
	}
	err := translateCall(&out, turns, options, func(mp *C.char, ml C.size_t, ap *C.char, al C.size_t, op *C.char, ol C.size_t, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_translate_to_messages(C.uint32_t(format), mp, ml, ap, al, op, ol, s)
	}, model)
	return out, err
}

// FromMessages reads format's message list back into canonical turns.
func FromMessages(format Format, model string, messages json.RawMessage, options map[string]any) (Conversation, error) {
	var out Conversation
	err := translateCall(&out, messages, options, func(mp *C.char, ml C.size_t, ap *C.char, al C.size_t, op *C.char, ol C.size_t, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_translate_from_messages(C.uint32_t(format), mp, ml, ap, al, op, ol, s)
	}, model)
	return out, err
}

// ToRequest builds format's whole request body for a conversation.
func ToRequest(format Format, model string, request Request, options map[string]any) (RequestBody, error) {
	var out RequestBody
	if request.Turns == nil {
		request.Turns = []Turn{}
	}
	err := translateCall(&out, request, options, func(mp *C.char, ml C.size_t, ap *C.char, al C.size_t, op *C.char, ol C.size_t, s *C.codeoid_string) *C.codeoid_error {
		return C.codeoid_translate_to_request(C.uint32_t(format), mp, ml, ap, al, op, ol, s)
	}, model)
	return out, err
}

// DeclaredTools is a provider's `tools` value declaring some tools.
type DeclaredTools struct {
	Tools  json.RawMessage `json:"tools"`
	Losses []Loss          `json:"losses"`
}

// DeclareTools declares tools (for example those of Memory.ToolSchemas) in format's shape: the
// value of a request's `tools` field.
func DeclareTools(format Format, tools []ToolSpec, options map[string]any) (DeclaredTools, error) {
	var out DeclaredTools
	if tools == nil {
		tools = []ToolSpec{}
	}
	toolsJSON, err := optionalJSON(tools)
	if err != nil {
		return out, err
	}
	var optionsJSON string
	if options != nil {
		if optionsJSON, err = optionalJSON(options); err != nil {
			return out, err
		}
	}
	tp, tl := text(toolsJSON)
	op, ol := optionalText(optionsJSON)
	var s C.codeoid_string
	if err := takeError(C.codeoid_translate_declare_tools(C.uint32_t(format), tp, tl, op, ol, &s)); err != nil {
		return out, err
	}
	return out, decodeOut(&s, &out)
}
