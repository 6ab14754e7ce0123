package codeoid

import (
	"fmt"
	"reflect"
	"unicode/utf8"
)

// checkValue refuses what encoding/json would change without a word on its way to C: a string
// that is not valid UTF-8 (its bytes would become U+FFFD) and a Part field its Type does not
// carry (Part.MarshalJSON writes only its type's fields). name is the value's name in messages;
// the error names the field, as in Turn.Parts[0].Text.
func checkValue(v any, name string) error {
	if v == nil {
		return nil
	}
	return checkReflected(reflect.ValueOf(v), name)
}

var partType = reflect.TypeOf(Part{})

func checkReflected(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.String:
		return checkText(v.String(), path)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkReflected(v.Elem(), path)
	case reflect.Struct:
		if v.Type() == partType {
			if err := checkPartFields(v.Interface().(Part), path); err != nil {
				return err
			}
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if field := t.Field(i); field.IsExported() {
				if err := checkReflected(v.Field(i), path+"."+field.Name); err != nil {
					return err
				}
			}
		}
	case reflect.Slice, reflect.Array:
		// Bytes (json.RawMessage) reach C as they are, and C refuses invalid UTF-8 itself.
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil
		}
		for i := 0; i < v.Len(); i++ {
			if err := checkReflected(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		entries := v.MapRange()
		for entries.Next() {
			key := entries.Key()
			if key.Kind() == reflect.String {
				if err := checkText(key.String(), path+" key"); err != nil {
					return err
				}
			}
			if err := checkReflected(entries.Value(), fmt.Sprintf("%s[%q]", path, fmt.Sprint(key.Interface()))); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkText is ErrInvalidUTF8 naming path and the first bad byte, when s is not UTF-8.
func checkText(s, path string) error {
	if utf8.ValidString(s) {
		return nil
	}
	offset := 0
	for offset < len(s) {
		r, size := utf8.DecodeRuneInString(s[offset:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		offset += size
	}
	return &Error{code: CodeInvalidUTF8, message: fmt.Sprintf(
		"%s is not valid UTF-8 (byte %d of %d); codeoid keeps text as UTF-8, so decode other "+
			"encodings first (strings.ToValidUTF8 replaces what cannot be decoded)", path, offset, len(s))}
}

// partFields are the fields each part type carries besides Type.
var partFields = map[string][]string{
	"text":        {"Text"},
	"thinking":    {"Text", "Signature", "Redacted"},
	"tool_call":   {"ID", "Name", "Input", "ProviderID"},
	"tool_result": {"CallID", "Parts", "IsError"},
	"image":       {"Source", "MediaType"},
	"error":       {"Message"},
}

// checkPartFields is ErrInvalidInput when p sets a field its type does not carry (a tool
// result's output put in Text rather than in Parts, say), which would be dropped.
func checkPartFields(p Part, path string) error {
	carried, known := partFields[p.Type]
	if !known {
		return nil // the library names an unknown type itself
	}
	set := []struct {
		field string
		set   bool
	}{
		{"Text", p.Text != ""}, {"ID", p.ID != ""}, {"ProviderID", p.ProviderID != ""},
		{"Name", p.Name != ""}, {"Input", len(p.Input) > 0}, {"CallID", p.CallID != ""},
		{"Parts", len(p.Parts) > 0}, {"IsError", p.IsError}, {"Message", p.Message != ""},
		{"MediaType", p.MediaType != ""}, {"Source", len(p.Source) > 0},
		{"Signature", len(p.Signature) > 0}, {"Redacted", p.Redacted},
	}
	for _, f := range set {
		if f.set && !contains(carried, f.field) {
			hint := ""
			if p.Type == "tool_result" && f.field == "Text" {
				hint = " (a tool result's output goes in Parts: []Part{TextPart(output)}; ToolResultPart does this)"
			}
			return &Error{code: CodeInvalidInput, message: fmt.Sprintf(
				"%s is a %q part, which has no field %s (it carries %v)%s; the field would be lost",
				path, p.Type, f.field, carried, hint)}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}
