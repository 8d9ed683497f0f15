package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// jsonKind is the JSON type of a decoded value.
type jsonKind int

const (
	kindNull jsonKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k jsonKind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "a list"
	default:
		return "an object"
	}
}

// jsonNode is one value of the scenario document, kept generic so the schema check can report
// every problem at once instead of stopping at the first one as encoding/json would.
type jsonNode struct {
	kind    jsonKind
	boolean bool
	text    string // the number's literal text, or the string's value
	members []jsonMember
	elems   []*jsonNode
}

type jsonMember struct {
	key   string
	value *jsonNode
}

// maxJSONDepth bounds nesting; a scenario never needs more than a handful of levels, and a
// bound keeps hostile input from costing deep recursion.
const maxJSONDepth = 32

// decodeTree reads exactly one JSON value from data. Duplicate keys are reported through dup
// (with the path of the repeated member) and decoding continues; syntax errors, excessive
// nesting and trailing data end decoding with an error.
func decodeTree(data []byte, dup func(path, key string)) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := readValue(dec, data, "", 0, dup)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: unexpected data after the end of the JSON document; the scenario must be exactly one JSON object", jsonPosition(data, dec.InputOffset()))
	}
	return root, nil
}

func readValue(dec *json.Decoder, data []byte, path string, depth int, dup func(path, key string)) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(data, dec, err)
	}
	return valueFromToken(tok, dec, data, path, depth, dup)
}

func valueFromToken(tok json.Token, dec *json.Decoder, data []byte, path string, depth int, dup func(path, key string)) (*jsonNode, error) {
	switch t := tok.(type) {
	case nil:
		return &jsonNode{kind: kindNull}, nil
	case bool:
		return &jsonNode{kind: kindBool, boolean: t}, nil
	case json.Number:
		return &jsonNode{kind: kindNumber, text: string(t)}, nil
	case string:
		return &jsonNode{kind: kindString, text: t}, nil
	case json.Delim:
		if depth >= maxJSONDepth {
			return nil, fmt.Errorf("%s: nested more than %d levels deep; a scenario needs only a few", jsonPosition(data, dec.InputOffset()), maxJSONDepth)
		}
		if t == '[' {
			n := &jsonNode{kind: kindArray}
			for dec.More() {
				elem, err := readValue(dec, data, fmt.Sprintf("%s[%d]", path, len(n.elems)), depth+1, dup)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, elem)
			}
			if _, err := dec.Token(); err != nil { // the closing ']'
				return nil, syntaxError(data, dec, err)
			}
			return n, nil
		}
		n := &jsonNode{kind: kindObject}
		seen := map[string]bool{}
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return nil, syntaxError(data, dec, err)
			}
			key, _ := keyTok.(string) // the decoder guarantees object keys are strings
			child, err := readValue(dec, data, joinPath(path, key), depth+1, dup)
			if err != nil {
				return nil, err
			}
			if seen[key] {
				dup(path, key)
				continue
			}
			seen[key] = true
			n.members = append(n.members, jsonMember{key: key, value: child})
		}
		if _, err := dec.Token(); err != nil { // the closing '}'
			return nil, syntaxError(data, dec, err)
		}
		return n, nil
	}
	return nil, fmt.Errorf("%s: unexpected JSON token", jsonPosition(data, dec.InputOffset()))
}

func syntaxError(data []byte, dec *json.Decoder, err error) error {
	offset := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: the JSON document ends too early (an unclosed object, list or string?)", jsonPosition(data, int64(len(data))))
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return fmt.Errorf("%s: invalid JSON: %s", jsonPosition(data, offset), msg)
}

// position turns a byte offset into "line L, column C" (1-based) so an editor can jump there.
func jsonPosition(data []byte, offset int64) string {
	if offset < 0 {
		offset = 0
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// joinPath appends an object key to a path ("fleet" + "gpu_blocks" = "fleet.gpu_blocks").
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexPath appends a list index to a path ("scale_in" + 1 = "scale_in[1]").
func indexPath(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}
