package web

import (
	_ "embed"
	"net/http"
	"sync"

	"sigs.k8s.io/yaml"
)

// openAPIYAML is the OpenAPI 3 document of /api/v1, written by hand and checked against the
// server: web's API tests validate every request the server accepted and every answer against
// it (openapi_test.go), and TestOpenAPICoversEveryRoute that every route of the API group is
// in it.
//
//go:embed openapi/openapi.yaml
var openAPIYAML []byte

var openAPIJSON = sync.OnceValues(func() ([]byte, error) { return yaml.YAMLToJSON(openAPIYAML) })

// apiOpenAPI is GET /api/v1/openapi.json.
func (s *Server) apiOpenAPI(w http.ResponseWriter, r *http.Request) error {
	doc, err := openAPIJSON()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(doc)
	return err
}
