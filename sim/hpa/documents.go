package hpa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// object is one Kubernetes object of the input: its place (for messages), its type, its
// document as JSON and the text of the document it came from (for template markers).
type object struct {
	path string
	tm   metav1.TypeMeta
	json []byte
	doc  document
}

// templateMarks are what Helm and Terraform templates hold until rendered.
var templateMarks = []string{"{{", "${"}

// templateError is the message for a document that still holds template markers outside its
// comments (nil when it holds none). first is the document's first line in the file.
func templateError(d document) error {
	n := d.first - 1
	for line := range bytes.Lines(d.text) {
		n++
		code := withoutComment(line)
		for _, mark := range templateMarks {
			if i := bytes.Index(code, []byte(mark)); i >= 0 {
				end := min(len(code), i+40)
				return fmt.Errorf("line %d: this is a Helm/Terraform template (%q): render it first (helm template RELEASE CHART, terraform plan, or kubectl get hpa NAME -o yaml from the cluster) and import the result",
					n, strings.TrimSpace(string(code[i:end])))
			}
		}
	}
	return nil
}

// withoutComment is a YAML line without its comment: from a # that starts the line or follows
// a space, outside quotes.
func withoutComment(line []byte) []byte {
	var quote byte
	for i, c := range line {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}

// hasMarks reports whether JSON holds a template marker.
func hasMarks(js []byte) bool {
	for _, m := range templateMarks {
		if bytes.Contains(js, []byte(m)) {
			return true
		}
	}
	return false
}

// objects reads every document of a YAML or JSON stream, unwrapping kind: List and every
// *List (what kubectl get -o yaml prints), into objects in their order. Template markers only
// refuse a document that does not read as YAML; those in the fields Import reads are refused
// where they are read (readMarks), and those in comments or other fields never.
func objects(data []byte) ([]object, error) {
	var out []object
	for i, doc := range splitDocuments(data) {
		path := fmt.Sprintf("document %d", i+1)
		js, err := yaml.YAMLToJSON(doc.text)
		if err != nil {
			if terr := templateError(doc); terr != nil {
				return nil, terr
			}
			return nil, fmt.Errorf("%s: not YAML or JSON a manifest can be read from: %v", path, err)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		if out, err = appendObject(out, path, js, doc, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readMarks refuses an object whose read fields (given as JSON) hold template markers.
func readMarks(o object, fields ...any) error {
	for _, f := range fields {
		js, err := json.Marshal(f)
		if err == nil && hasMarks(js) {
			if terr := templateError(o.doc); terr != nil {
				return terr
			}
			return fmt.Errorf("%s: holds a Helm/Terraform template marker ({{ or ${): render it first (helm template RELEASE CHART) and import the result", o.path)
		}
	}
	return nil
}

// maxListDepth bounds List inside List.
const maxListDepth = 4

func appendObject(out []object, path string, js []byte, doc document, depth int) ([]object, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return nil, fmt.Errorf("%s: not a Kubernetes object (a mapping with apiVersion and kind): %v", path, err)
	}
	if !strings.HasSuffix(tm.Kind, "List") {
		return append(out, object{path: path, tm: tm, json: js, doc: doc}), nil
	}
	if depth >= maxListDepth {
		return nil, fmt.Errorf("%s: lists nested more than %d deep", path, maxListDepth)
	}
	var list struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ListMeta   `json:"metadata"`
		Items           []json.RawMessage `json:"items"`
	}
	if err := strictJSON(js, &list); err != nil {
		return nil, fmt.Errorf("%s (%s): %v", path, tm.Kind, err)
	}
	for j, item := range list.Items {
		var err error
		if out, err = appendObject(out, fmt.Sprintf("%s items[%d]", path, j), item, doc, depth+1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// strictJSON decodes refusing fields the type does not have.
func strictJSON(js []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%v (check the field's spelling and indentation against the API reference)", err)
	}
	return nil
}

// document is one YAML document of a stream and the line it starts on.
type document struct {
	text  []byte
	first int
}

// splitDocuments splits YAML at "---" lines and drops documents that hold only comments.
func splitDocuments(data []byte) []document {
	var docs []document
	var cur []byte
	first, n := 1, 0
	flush := func(next int) {
		for line := range bytes.Lines(cur) {
			t := bytes.TrimSpace(line)
			if len(t) > 0 && t[0] != '#' {
				docs = append(docs, document{cur, first})
				break
			}
		}
		cur, first = nil, next
	}
	for line := range bytes.Lines(data) {
		n++
		t := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			flush(n + 1)
			continue
		}
		cur = append(cur, line...)
	}
	flush(n + 1)
	return docs
}

// jsonLenient decodes ignoring fields the type does not have (for CRDs that change often).
func jsonLenient(js []byte, v any) error { return json.Unmarshal(js, v) }
