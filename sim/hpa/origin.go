package hpa

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
)

// ReadOrigin reads an Origin that came back from a client (the import API's "origin", a form's
// hidden field) and checks that Export can write a's settings into it, so that a plan stores
// only an origin its download can use.
func ReadOrigin(raw []byte, a sim.Autoscaler) (*Origin, error) {
	// The object as JSON and the whole file as a JSON string (escaped, so up to twice as long).
	if len(raw) > 4*MaxManifestBytes {
		return nil, fmt.Errorf("origin: %d bytes; at most %d", len(raw), 4*MaxManifestBytes)
	}
	var o Origin
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("origin: not the origin an import returned (%v); import the manifest again", err)
	}
	if o.Kind != "HorizontalPodAutoscaler" && o.Kind != "ScaledObject" {
		return nil, fmt.Errorf("origin.kind: %q is not HorizontalPodAutoscaler or ScaledObject; import the manifest again", o.Kind)
	}
	if _, err := Export(Settings{Autoscaler: a, Origin: &o}); err != nil {
		return nil, fmt.Errorf("origin: the settings cannot be written into it (%v); import the manifest again", err)
	}
	return &o, nil
}
