package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
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

// maxJSONValues bounds the values in one document, so that a 32 MiB body of tiny values
// cannot cost gigabytes of tree: checkJSONShape counts them before the tree is built, and a tree
// costs about 100 bytes per value (400 MB at the bound, while it is parsed). 200,000 scripted
// requests with a few labels each need about 3 million.
const maxJSONValues = 4_000_000

// treeReader is a small JSON parser that builds a jsonNode tree. It is hand-written because
// encoding/json's Token API costs microseconds per token, which made a 200,000-request
// scenario take seconds; this one is linear and allocates little. Paths are built only when a
// duplicate key has to be reported.
type treeReader struct {
	data   []byte
	pos    int
	path   []pathSegment
	dup    func(path, key string)
	values int
}

type pathSegment struct {
	key   string
	index int // a list index, used when isIndex is set
	isIdx bool
}

func (r *treeReader) pathString() string {
	p := ""
	for _, seg := range r.path {
		if seg.isIdx {
			p = indexPath(p, seg.index)
		} else {
			p = joinPath(p, seg.key)
		}
	}
	return p
}

// decodeTree reads exactly one JSON value from data. Duplicate keys are reported through dup
// (with the path of the object holding them) and decoding continues with the first value;
// syntax errors, excessive nesting and trailing data end decoding with an error.
func decodeTree(data []byte, dup func(path, key string)) (*jsonNode, error) {
	// Count values and nesting before building anything: a body of millions of tiny values is
	// refused for the cost of one pass over its bytes, not after a tree of them is built.
	if err := checkJSONShape(data); err != nil {
		return nil, err
	}
	r := &treeReader{data: data, dup: dup}
	r.skipSpace()
	root, err := r.value(0)
	if err != nil {
		return nil, err
	}
	r.skipSpace()
	if r.pos < len(r.data) {
		return nil, fmt.Errorf("%s: unexpected data after the end of the JSON document; the scenario must be exactly one JSON object", jsonPosition(data, int64(r.pos)))
	}
	return root, nil
}

func (r *treeReader) fail(format string, args ...any) error {
	if r.pos >= len(r.data) {
		return fmt.Errorf("%s: the JSON document ends too early (an unclosed object, list or string?)", jsonPosition(r.data, int64(len(r.data))))
	}
	return fmt.Errorf("%s: invalid JSON: %s", jsonPosition(r.data, int64(r.pos)), fmt.Sprintf(format, args...))
}

func (r *treeReader) skipSpace() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

func (r *treeReader) value(depth int) (*jsonNode, error) {
	if r.pos >= len(r.data) {
		return nil, r.fail("")
	}
	if r.values++; r.values > maxJSONValues {
		return nil, fmt.Errorf("%s: the scenario has more than %d JSON values; use \"X*N\" block labels, or a trace or sessions workload", jsonPosition(r.data, int64(r.pos)), maxJSONValues)
	}
	switch c := r.data[r.pos]; {
	case c == '{':
		return r.object(depth)
	case c == '[':
		return r.array(depth)
	case c == '"':
		s, err := r.str()
		if err != nil {
			return nil, err
		}
		return &jsonNode{kind: kindString, text: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	case r.literal("true"):
		return &jsonNode{kind: kindBool, boolean: true}, nil
	case r.literal("false"):
		return &jsonNode{kind: kindBool}, nil
	case r.literal("null"):
		return &jsonNode{kind: kindNull}, nil
	default:
		return nil, r.fail("unexpected character %q where a value should start", rune(c))
	}
}

func (r *treeReader) literal(word string) bool {
	if bytes.HasPrefix(r.data[r.pos:], []byte(word)) {
		r.pos += len(word)
		return true
	}
	return false
}

func (r *treeReader) tooDeep(depth int) error {
	if depth < maxJSONDepth {
		return nil
	}
	return fmt.Errorf("%s: nested more than %d levels deep; a scenario needs only a few", jsonPosition(r.data, int64(r.pos)), maxJSONDepth)
}

func (r *treeReader) object(depth int) (*jsonNode, error) {
	if err := r.tooDeep(depth); err != nil {
		return nil, err
	}
	r.pos++ // '{'
	n := &jsonNode{kind: kindObject}
	var seen map[string]bool // only for large objects; small ones are scanned
	r.skipSpace()
	if r.pos < len(r.data) && r.data[r.pos] == '}' {
		r.pos++
		return n, nil
	}
	for {
		r.skipSpace()
		if r.pos >= len(r.data) || r.data[r.pos] != '"' {
			return nil, r.fail("expected a quoted member name")
		}
		key, err := r.str()
		if err != nil {
			return nil, err
		}
		r.skipSpace()
		if r.pos >= len(r.data) || r.data[r.pos] != ':' {
			return nil, r.fail("expected ':' after the member name %q", key)
		}
		r.pos++
		r.skipSpace()
		r.path = append(r.path, pathSegment{key: key})
		child, err := r.value(depth + 1)
		r.path = r.path[:len(r.path)-1]
		if err != nil {
			return nil, err
		}
		if isDuplicateKey(n, key, &seen) {
			r.dup(r.pathString(), key)
		} else {
			n.members = append(n.members, jsonMember{key: key, value: child})
		}
		r.skipSpace()
		if r.pos >= len(r.data) {
			return nil, r.fail("")
		}
		switch r.data[r.pos] {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return n, nil
		default:
			return nil, r.fail("expected ',' or '}' after an object member")
		}
	}
}

// isDuplicateKey reports whether key is already a member of n; large objects switch from a
// scan to a set so hostile input cannot make this quadratic.
func isDuplicateKey(n *jsonNode, key string, seen *map[string]bool) bool {
	const scanLimit = 16
	if *seen == nil {
		for _, m := range n.members {
			if m.key == key {
				return true
			}
		}
		if len(n.members) < scanLimit {
			return false
		}
		*seen = make(map[string]bool, 2*scanLimit)
		for _, m := range n.members {
			(*seen)[m.key] = true
		}
	}
	if (*seen)[key] {
		return true
	}
	(*seen)[key] = true
	return false
}

func (r *treeReader) array(depth int) (*jsonNode, error) {
	if err := r.tooDeep(depth); err != nil {
		return nil, err
	}
	r.pos++ // '['
	n := &jsonNode{kind: kindArray}
	r.skipSpace()
	if r.pos < len(r.data) && r.data[r.pos] == ']' {
		r.pos++
		return n, nil
	}
	for {
		r.skipSpace()
		r.path = append(r.path, pathSegment{index: len(n.elems), isIdx: true})
		elem, err := r.value(depth + 1)
		r.path = r.path[:len(r.path)-1]
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, elem)
		r.skipSpace()
		if r.pos >= len(r.data) {
			return nil, r.fail("")
		}
		switch r.data[r.pos] {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return n, nil
		default:
			return nil, r.fail("expected ',' or ']' after a list element")
		}
	}
}

// str reads a JSON string starting at its opening quote. Strings with escapes are decoded by
// encoding/json, which knows every escape form.
func (r *treeReader) str() (string, error) {
	start := r.pos
	r.pos++ // opening quote
	escaped := false
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		switch {
		case c == '"':
			r.pos++
			if !escaped {
				return string(r.data[start+1 : r.pos-1]), nil
			}
			var s string
			if err := json.Unmarshal(r.data[start:r.pos], &s); err != nil {
				r.pos = start
				return "", r.fail("bad escape sequence in a string")
			}
			return s, nil
		case c == '\\':
			escaped = true
			r.pos += 2
		case c < 0x20:
			return "", r.fail(`control character in a string (write it as an escape like \n)`)
		default:
			r.pos++
		}
	}
	r.pos = len(r.data)
	return "", r.fail("")
}

// number reads a JSON number, checking the grammar of RFC 8259.
func (r *treeReader) number() (*jsonNode, error) {
	start := r.pos
	digits := func() int {
		n := 0
		for r.pos < len(r.data) && r.data[r.pos] >= '0' && r.data[r.pos] <= '9' {
			r.pos++
			n++
		}
		return n
	}
	if r.data[r.pos] == '-' {
		r.pos++
	}
	if r.pos < len(r.data) && r.data[r.pos] == '0' {
		r.pos++
	} else if digits() == 0 {
		return nil, r.fail("a number needs digits")
	}
	if r.pos < len(r.data) && r.data[r.pos] == '.' {
		r.pos++
		if digits() == 0 {
			return nil, r.fail("a number needs digits after '.'")
		}
	}
	if r.pos < len(r.data) && (r.data[r.pos] == 'e' || r.data[r.pos] == 'E') {
		r.pos++
		if r.pos < len(r.data) && (r.data[r.pos] == '+' || r.data[r.pos] == '-') {
			r.pos++
		}
		if digits() == 0 {
			return nil, r.fail("a number needs digits in its exponent")
		}
	}
	return &jsonNode{kind: kindNumber, text: string(r.data[start:r.pos])}, nil
}

// jsonPosition turns a byte offset into "line L, column C" (1-based) so an editor can jump there.
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
	if key == "" {
		return path
	}
	return path + "." + key
}

// indexPath appends a list index to a path ("scale_in" + 1 = "scale_in[1]").
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// checkJSONShape counts the values of a JSON document and its nesting in one pass without
// allocating, and fails once they pass maxJSONValues or maxJSONDepth. It counts exactly for
// valid JSON (the root, each object member, each list element); syntax is left to the reader.
func checkJSONShape(data []byte) error {
	var open [maxJSONDepth + 1]byte // '{' or '[' by depth
	depth, values := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth == maxJSONDepth {
				return fmt.Errorf("%s: nested more than %d levels deep; a scenario needs only a few", jsonPosition(data, int64(i)), maxJSONDepth)
			}
			open[depth] = c
			depth++
			if c == '[' {
				// A list's first element, unless the list is empty.
				j := i + 1
				for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
					j++
				}
				if j < len(data) && data[j] != ']' {
					values++
				}
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		case ':':
			values++
		case ',':
			if depth > 0 && open[depth-1] == '[' {
				values++
			}
		}
		if values > maxJSONValues {
			return fmt.Errorf("%s: the scenario has more than %d JSON values; use \"X*N\" block labels, or a trace or sessions workload", jsonPosition(data, int64(i)), maxJSONValues)
		}
	}
	return nil
}
