package hpa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// yamlFile is a YAML (or JSON) stream read as nodes together with its bytes, so that an edit
// replaces only the bytes of the value it changes: the nodes give each value's line and column,
// and everything between the edits (comments, key order, quoting, indentation) is the user's
// text, byte for byte. Re-encoding the nodes would not be: the encoder re-indents sequences and
// re-quotes scalars.
type yamlFile struct {
	src   []byte
	lines []int        // byte offset of the start of each line
	docs  []*yaml.Node // each document's root node
	edits []splice
	unit  int // the file's indentation step, for inserted blocks
	// seqIndent is how far a block sequence's "- " sits inside its key (0 as kubectl writes
	// it, or unit as Helm charts often do).
	seqIndent int
}

// splice replaces src[start:end] with text.
type splice struct {
	start, end int
	text       string
}

func parseYAMLFile(src []byte) (*yamlFile, error) {
	f := &yamlFile{src: src, lines: []int{0}, unit: 2, seqIndent: -1}
	for i, c := range src {
		if c == '\n' {
			f.lines = append(f.lines, i+1)
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			f.docs = append(f.docs, n.Content[0])
		}
	}
	for _, d := range f.docs {
		f.learnStyle(d)
	}
	if f.seqIndent < 0 {
		f.seqIndent = 0
	}
	return f, nil
}

// learnStyle reads the indentation step and the sequence indentation from the first block
// mapping and block sequence nested in a mapping.
func (f *yamlFile) learnStyle(n *yaml.Node) {
	if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle != 0 {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Style&yaml.FlowStyle != 0 || v.Line == k.Line {
			continue
		}
		switch v.Kind {
		case yaml.MappingNode:
			if d := v.Column - k.Column; d > 0 && f.unit == 2 {
				f.unit = d
			}
			f.learnStyle(v)
		case yaml.SequenceNode:
			if f.seqIndent < 0 {
				f.seqIndent = max(0, v.Column-k.Column)
			}
			for _, item := range v.Content {
				f.learnStyle(item)
			}
		}
	}
}

// offset is the byte offset of a node's line and column (yaml counts columns in characters).
func (f *yamlFile) offset(n *yaml.Node) int {
	if n.Line < 1 || n.Line > len(f.lines) {
		return len(f.src)
	}
	i := f.lines[n.Line-1]
	for c := 1; c < n.Column && i < len(f.src) && f.src[i] != '\n'; c++ {
		_, w := utf8.DecodeRune(f.src[i:])
		i += w
	}
	return i
}

// lineStart and lineEnd are the offsets of the start of i's line and of its newline (or the
// end of the file).
func (f *yamlFile) lineStart(i int) int {
	return bytes.LastIndexByte(f.src[:i], '\n') + 1
}

func (f *yamlFile) lineEnd(i int) int {
	if j := bytes.IndexByte(f.src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(f.src)
}

// get returns the key and value nodes of key in a mapping (nil, nil when absent).
func get(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// at follows a path of keys (string) and sequence indexes (int); nil when a step is missing.
func at(n *yaml.Node, path ...any) *yaml.Node {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			_, n = get(n, p)
		case int:
			if n == nil || n.Kind != yaml.SequenceNode || p >= len(n.Content) {
				return nil
			}
			n = n.Content[p]
		}
		if n == nil {
			return nil
		}
	}
	return n
}

func flow(n *yaml.Node) bool { return n.Style&yaml.FlowStyle != 0 }

// end is the offset just past a node's text: a scalar's last character, a flow collection's
// closing bracket, a block collection's last descendant. inFlow says whether the node is inside
// a flow collection (a plain scalar then ends at , ] or }); keyIndent is the indentation of the
// key or dash that holds it (a block scalar's lines are indented more).
func (f *yamlFile) end(n *yaml.Node, inFlow bool, keyIndent int) int {
	start := f.offset(n)
	switch {
	case n.Kind == yaml.ScalarNode:
		return f.scalarEnd(n, start, inFlow, keyIndent)
	case n.Kind == yaml.AliasNode:
		return start + 1 + len(n.Value)
	case flow(n) && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode):
		return f.flowEnd(start)
	}
	e := start
	for i, c := range n.Content {
		ind := c.Column - 1
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			ind = n.Content[i-1].Column - 1
		} else if n.Kind == yaml.SequenceNode {
			ind = max(0, c.Column-3)
		}
		e = max(e, f.end(c, false, ind))
	}
	return e
}

func (f *yamlFile) scalarEnd(n *yaml.Node, start int, inFlow bool, keyIndent int) int {
	s := f.src
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := start + 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return len(s)
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := start + 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
		return len(s)
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		e := f.lineEnd(start)
		for i := e + 1; i < len(s); {
			le := f.lineEnd(i)
			line := s[i:le]
			body := bytes.TrimLeft(line, " ")
			if len(bytes.TrimSpace(line)) > 0 {
				if len(line)-len(body) <= keyIndent {
					break
				}
				e = le
			}
			i = le + 1
		}
		return e
	}
	e := start
	for i := start; i < len(s) && s[i] != '\n' && s[i] != '\r'; i++ {
		if inFlow && (s[i] == ',' || s[i] == ']' || s[i] == '}') {
			break
		}
		if s[i] == '#' && i > start && (s[i-1] == ' ' || s[i-1] == '\t') {
			break
		}
		if s[i] != ' ' && s[i] != '\t' {
			e = i + 1
		}
	}
	return e
}

// flowEnd finds the bracket that closes the flow collection opening at start.
func (f *yamlFile) flowEnd(start int) int {
	s, depth := f.src, 0
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(s); i++ {
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// scal is a scalar to write: its value and whether it is a string (else a number, written as
// is).
type scal struct {
	v   string
	str bool
}

func num[T int | int32 | int64](v T) scal { return scal{v: strconv.FormatInt(int64(v), 10)} }
func str(v string) scal                   { return scal{v: v, str: true} }

// kv is one entry of a mapping to write; v is a scal, a []kv (a mapping) or a []any (a
// sequence of those).
type kv struct {
	k string
	v any
}

// plainOK reports whether v reads back as itself written as a plain YAML scalar (a string
// stays a string: "5" or "true" would not).
func plainOK(v scal) bool {
	if v.v == "" || strings.ContainsAny(v.v, "\n\r\t") || strings.TrimSpace(v.v) != v.v {
		return false
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte("k: "+v.v), &m); err != nil || len(m) != 1 {
		return false
	}
	if !v.str {
		return true
	}
	s, ok := m["k"].(string)
	return ok && s == v.v
}

func jsonQuote(v string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// scalarText writes v as a scalar in a style: a string in the style the user wrote the value
// it replaces in (plain where it reads back the same), a number plain.
func scalarText(v scal, style yaml.Style) string {
	switch {
	case !v.str && style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0:
		return v.v
	case style&yaml.SingleQuotedStyle != 0 && !strings.ContainsAny(v.v, "\n\r"):
		return "'" + strings.ReplaceAll(v.v, "'", "''") + "'"
	case style&yaml.DoubleQuotedStyle != 0 || style&yaml.FlowStyle != 0:
		return jsonQuote(v.v)
	case plainOK(v):
		return v.v
	}
	return jsonQuote(v.v)
}

// block writes entries as block YAML at an indentation.
func (f *yamlFile) block(entries []kv, indent int) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	for _, e := range entries {
		b.WriteString(pad + e.k + ":")
		b.WriteString(f.blockValue(e.v, indent))
	}
	return b.String()
}

// blockValue writes what follows "key:": " scalar\n", or a newline and the nested block.
func (f *yamlFile) blockValue(v any, indent int) string {
	switch v := v.(type) {
	case scal:
		return " " + scalarText(v, 0) + "\n"
	case []kv:
		if len(v) == 0 {
			return " {}\n"
		}
		return "\n" + f.block(v, indent+f.unit)
	case []any:
		if len(v) == 0 {
			return " []\n"
		}
		return "\n" + f.seq(v, indent+f.seqIndent)
	}
	return " null\n"
}

// seq writes a block sequence with its dashes at an indentation.
func (f *yamlFile) seq(items []any, indent int) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	for _, it := range items {
		switch it := it.(type) {
		case []kv:
			inner := f.block(it, indent+2)
			b.WriteString(pad + "- " + inner[indent+2:])
		case scal:
			b.WriteString(pad + "- " + scalarText(it, 0) + "\n")
		}
	}
	return b.String()
}

// flowText writes a value as JSON (valid flow YAML).
func flowText(v any) string {
	switch v := v.(type) {
	case scal:
		if v.str {
			return jsonQuote(v.v)
		}
		return v.v
	case []kv:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = jsonQuote(e.k) + ": " + flowText(e.v)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = flowText(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return "null"
}

func (f *yamlFile) add(start, end int, text string) {
	f.edits = append(f.edits, splice{start, end, text})
}

// setScalar replaces a scalar's text with v, in the style the user wrote it in.
func (f *yamlFile) setScalar(n *yaml.Node, v scal, inFlow bool, keyIndent int) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: not a single value", n.Line)
	}
	start := f.offset(n)
	end := f.scalarEnd(n, start, inFlow, keyIndent)
	style := n.Style
	if inFlow {
		style |= yaml.FlowStyle
	}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		if !v.str {
			f.add(start, end, v.v)
			return nil
		}
		pad := strings.Repeat(" ", keyIndent+f.unit)
		lines := strings.Split(v.v, "\n")
		f.add(start, end, "|-\n"+pad+strings.Join(lines, "\n"+pad))
		return nil
	}
	f.add(start, end, scalarText(v, style))
	return nil
}

// leaf is one value to write at a path of keys; before names the key a new entry goes in
// front of (else it goes last).
type leaf struct {
	path   []string
	v      any
	before string
}

// set writes v at a path of keys below mapping m (see setAll).
func (f *yamlFile) set(m *yaml.Node, path []string, v any, before string) error {
	return f.setAll(m, []leaf{{path, v, before}}, false)
}

// setAll writes values at paths of keys below mapping m, creating the mappings that are
// missing: the leaves under one missing key are inserted together, as one entry, so two
// fields of a new behavior make one behavior. A value that is there is replaced: a scalar by
// setScalar, anything else whole.
func (f *yamlFile) setAll(m *yaml.Node, leaves []leaf, inFlow bool) error {
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: not a mapping", m.Line)
	}
	inFlow = inFlow || flow(m)
	var order []string
	groups := map[string][]leaf{}
	for _, l := range leaves {
		if _, ok := groups[l.path[0]]; !ok {
			order = append(order, l.path[0])
		}
		groups[l.path[0]] = append(groups[l.path[0]], l)
	}
	for _, key := range order {
		g := groups[key]
		k, val := get(m, key)
		switch {
		case k == nil || (val.Kind == yaml.ScalarNode && val.Tag == "!!null"):
			tree := mergeLeaves(g)
			if k != nil {
				if err := f.replace(k, val, tree, inFlow); err != nil {
					return err
				}
				continue
			}
			before := ""
			if len(g) == 1 && len(g[0].path) == 1 {
				before = g[0].before
			}
			if err := f.insert(m, kv{key, tree}, before, inFlow); err != nil {
				return err
			}
		case val.Kind == yaml.AliasNode:
			return fmt.Errorf("line %d: %s is a YAML alias; edit it by hand", val.Line, key)
		default:
			var deeper []leaf
			for _, l := range g {
				if len(l.path) == 1 {
					if err := f.replace(k, val, l.v, inFlow); err != nil {
						return err
					}
					continue
				}
				deeper = append(deeper, leaf{l.path[1:], l.v, l.before})
			}
			if len(deeper) > 0 {
				if val.Kind != yaml.MappingNode {
					return fmt.Errorf("line %d: %s is not a mapping", val.Line, key)
				}
				if err := f.setAll(val, deeper, inFlow); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// mergeLeaves builds the value of one new key from the leaves below it (their paths start
// with that key).
func mergeLeaves(ls []leaf) any {
	if len(ls) == 1 && len(ls[0].path) == 1 {
		return ls[0].v
	}
	var out []kv
	idx := map[string]int{}
	var sub [][]leaf
	for _, l := range ls {
		if len(l.path) < 2 {
			continue
		}
		k := l.path[1]
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, kv{k: k})
			sub = append(sub, nil)
		}
		sub[i] = append(sub[i], leaf{l.path[1:], l.v, l.before})
	}
	for i := range out {
		out[i].v = mergeLeaves(sub[i])
	}
	return out
}

// replace writes tree as the value of key k (whose value node is val).
func (f *yamlFile) replace(k, val *yaml.Node, tree any, inFlow bool) error {
	keyIndent := k.Column - 1
	if s, ok := tree.(scal); ok && val.Kind == yaml.ScalarNode && val.Tag != "!!null" {
		return f.setScalar(val, s, inFlow || flow(val), keyIndent)
	}
	if inFlow || flow(val) {
		start := f.offset(val)
		f.add(start, f.end(val, inFlow, keyIndent), flowText(tree))
		return nil
	}
	// A block value: the key's line through the value's last line, written anew.
	start := f.lineStart(f.offset(k))
	end := f.lineEnd(f.end(val, false, keyIndent))
	if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
		end = f.lineEnd(f.offset(k))
	}
	text := f.block([]kv{{k.Value, tree}}, keyIndent)
	f.add(start, end, strings.TrimSuffix(text, "\n"))
	return nil
}

// replaceItem writes tree in place of a sequence item.
func (f *yamlFile) replaceItem(seq, item *yaml.Node, tree []kv) {
	start := f.offset(item)
	if flow(seq) || flow(item) {
		f.add(start, f.end(item, flow(seq), 0), flowText(tree))
		return
	}
	ind := item.Column - 1
	text := f.block(tree, ind)
	f.add(start, f.end(item, false, max(0, ind-2)), strings.TrimSuffix(text[ind:], "\n"))
}

// insert adds an entry to a mapping: in front of before when the mapping has it, else after
// its last entry; in a flow mapping (JSON) as the first entry.
func (f *yamlFile) insert(m *yaml.Node, e kv, before string, inFlow bool) error {
	if flow(m) || inFlow {
		start := f.offset(m)
		if len(m.Content) == 0 {
			f.add(start, f.flowEnd(start), "{"+jsonQuote(e.k)+": "+flowText(e.v)+"}")
			return nil
		}
		at := m.Content[0]
		if bk, _ := get(m, before); bk != nil {
			at = bk
		}
		f.add(f.offset(at), f.offset(at), jsonQuote(e.k)+": "+flowText(e.v)+", ")
		return nil
	}
	if len(m.Content) == 0 {
		return fmt.Errorf("line %d: an empty mapping", m.Line)
	}
	indent := m.Content[0].Column - 1
	if bk, _ := get(m, before); bk != nil {
		i := f.lineStart(f.offset(bk))
		f.add(i, i, f.block([]kv{e}, indent))
		return nil
	}
	last := m.Content[len(m.Content)-1]
	e2 := f.lineEnd(f.end(last, false, m.Content[len(m.Content)-2].Column-1))
	if e2 == len(f.src) {
		f.add(e2, e2, "\n"+strings.TrimSuffix(f.block([]kv{e}, indent), "\n"))
		return nil
	}
	f.add(e2+1, e2+1, f.block([]kv{e}, indent))
	return nil
}

// result applies the edits to the bytes.
func (f *yamlFile) result() ([]byte, error) {
	es := slices.Clone(f.edits)
	slices.SortStableFunc(es, func(a, b splice) int { return a.start - b.start })
	var out bytes.Buffer
	pos := 0
	for _, e := range es {
		if e.start < pos {
			return nil, errors.New("two changes overlap in the file")
		}
		out.Write(f.src[pos:e.start])
		out.WriteString(e.text)
		pos = e.end
	}
	out.Write(f.src[pos:])
	return out.Bytes(), nil
}

// yobj is a Kubernetes object of the file: its node and identity.
type yobj struct {
	node                              *yaml.Node
	kind, apiVersion, name, namespace string
}

// objects lists the file's objects, unwrapping kind: List and every *List.
func (f *yamlFile) objects() []yobj {
	var out []yobj
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if n == nil || n.Kind != yaml.MappingNode || depth > maxListDepth {
			return
		}
		o := yobj{node: n}
		if v := at(n, "kind"); v != nil {
			o.kind = v.Value
		}
		if v := at(n, "apiVersion"); v != nil {
			o.apiVersion = v.Value
		}
		if v := at(n, "metadata", "name"); v != nil {
			o.name = v.Value
		}
		if v := at(n, "metadata", "namespace"); v != nil {
			o.namespace = v.Value
		}
		if strings.HasSuffix(o.kind, "List") {
			if items := at(n, "items"); items != nil && items.Kind == yaml.SequenceNode {
				for _, it := range items.Content {
					walk(it, depth+1)
				}
			}
			return
		}
		out = append(out, o)
	}
	for _, d := range f.docs {
		walk(d, 0)
	}
	return out
}
