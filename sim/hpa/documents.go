package hpa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// object is one Kubernetes object of the input: its place (for messages), its type and its
// document as JSON.
type object struct {
	path string
	tm   metav1.TypeMeta
	json []byte
}

// templateError is the message for a document that still holds template markers.
func templateError(data []byte) error {
	n := 0
	for line := range bytes.Lines(data) {
		n++
		for _, mark := range []string{"{{", "${"} {
			if i := bytes.Index(line, []byte(mark)); i >= 0 {
				end := min(len(line), i+40)
				return fmt.Errorf("line %d: this is a Helm/Terraform template (%q): render it first (helm template RELEASE CHART, terraform plan, or kubectl get hpa NAME -o yaml from the cluster) and import the result",
					n, strings.TrimSpace(string(line[i:end])))
			}
		}
	}
	return nil
}

// objects reads every document of a YAML or JSON stream, unwrapping kind: List and every
// *List (what kubectl get -o yaml prints), into objects in their order.
func objects(data []byte) ([]object, error) {
	if err := templateError(data); err != nil {
		return nil, err
	}
	var out []object
	for i, doc := range splitDocuments(data) {
		path := fmt.Sprintf("document %d", i+1)
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: not YAML or JSON a manifest can be read from: %v", path, err)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		if out, err = appendObject(out, path, js, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxListDepth bounds List inside List.
const maxListDepth = 4

func appendObject(out []object, path string, js []byte, depth int) ([]object, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return nil, fmt.Errorf("%s: not a Kubernetes object (a mapping with apiVersion and kind): %v", path, err)
	}
	if !strings.HasSuffix(tm.Kind, "List") {
		return append(out, object{path: path, tm: tm, json: js}), nil
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
		if out, err = appendObject(out, fmt.Sprintf("%s items[%d]", path, j), item, depth+1); err != nil {
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

// splitDocuments splits YAML at "---" lines and drops documents that hold only comments.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	flush := func() {
		for line := range bytes.Lines(cur) {
			t := bytes.TrimSpace(line)
			if len(t) > 0 && t[0] != '#' {
				docs = append(docs, cur)
				break
			}
		}
		cur = nil
	}
	for line := range bytes.Lines(data) {
		t := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			flush()
			continue
		}
		cur = append(cur, line...)
	}
	flush()
	return docs
}

// jsonLenient decodes ignoring fields the type does not have (for CRDs that change often).
func jsonLenient(js []byte, v any) error { return json.Unmarshal(js, v) }
