package hpa

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReadOrigin reads an Origin that came back from a client (the import API's "origin", a form's
// hidden field) and checks that Export can write a's settings into it, so that a plan stores
// only an origin its download can use.
func ReadOrigin(raw []byte, a sim.Autoscaler) (*Origin, error) {
	// The document, the user's file as a JSON string (escaped, so up to twice as long), their
	// fields, and the JSON escapes of an origin sent inside a string (a form's hidden field).
	if limit := 2*(MaxOriginBytes+2*MaxOriginManifestBytes) + 4<<10; len(raw) > limit {
		return nil, fmt.Errorf("origin: %s; at most %s (the origin an import returns is its object's spec and name, within %s, and the file it came from, within %s): import the manifest again",
			kib(len(raw)), kib(limit), kib(MaxOriginBytes), kib(MaxOriginManifestBytes))
	}
	var o Origin
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("origin: not the origin an import returned (%v); import the manifest again", err)
	}
	if len(o.Document) > MaxOriginBytes {
		return nil, fmt.Errorf("origin.document: %s; at most %s (the origin an import returns is its object's spec and name): import the manifest again",
			kib(len(o.Document)), kib(MaxOriginBytes))
	}
	if len(o.Manifest) > MaxOriginManifestBytes {
		return nil, fmt.Errorf("origin.manifest: %s; at most %s (an import keeps the file it came from only within %s): import the manifest again",
			kib(len(o.Manifest)), kib(MaxOriginManifestBytes), kib(MaxOriginManifestBytes))
	}
	if o.Kind != "HorizontalPodAutoscaler" && o.Kind != "ScaledObject" {
		return nil, fmt.Errorf("origin.kind: %q is not HorizontalPodAutoscaler or ScaledObject; import the manifest again", o.Kind)
	}
	if _, err := Export(Settings{Autoscaler: a, Origin: &o}); err != nil {
		return nil, fmt.Errorf("origin: the settings cannot be written into it (%v); import the manifest again", err)
	}
	return &o, nil
}

// What an Origin keeps (finding M3 of the 2026-12c probe: a plan stored its origin, up to 2 MiB
// of any annotations, outside every quota, 57 MB a minute for one user). An origin is what the
// plan's manifest download writes the tuned settings into: the object's spec and the metadata
// that names it. Its managed fields, status and kubectl's copy of the whole object are dropped;
// annotations and labels are kept while they are small, and an object that is still large is
// not kept at all (the download then writes a new object).
const (
	// MaxOriginBytes bounds an origin's document (a real HPA or ScaledObject is 1–4 KiB).
	MaxOriginBytes = 64 << 10
	// MaxOriginManifestBytes bounds the user's file an origin keeps (Origin.Manifest), which
	// the download edits in place; a larger file is not kept, and the download writes the
	// settings into the trimmed object instead.
	MaxOriginManifestBytes = 256 << 10
	// maxMetaBytes bounds an origin's annotations and labels together.
	maxMetaBytes = 8 << 10
	// lastApplied is kubectl apply's copy of the object, which it writes again.
	lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// trimMeta drops from m what an origin does not keep.
func (im *Imported) trimMeta(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	delete(m.Annotations, lastApplied)
	size := 0
	for k, v := range m.Annotations {
		size += len(k) + len(v)
	}
	for k, v := range m.Labels {
		size += len(k) + len(v)
	}
	if size > maxMetaBytes {
		im.problem("metadata", "the annotations and labels are %s, above the %s the manifest download keeps; left out of it (add them back when you apply it)",
			kib(size), kib(maxMetaBytes))
		m.Annotations, m.Labels = nil, nil
	}
}

// keepOrigin keeps o as the import's origin unless its document is over MaxOriginBytes.
func (im *Imported) keepOrigin(o *Origin) {
	if len(o.Document) > MaxOriginBytes {
		im.problem("", "the %s is %s once trimmed, above the %s a plan keeps; a tune plan's download writes a new %s instead of this one", o.Kind,
			kib(len(o.Document)), kib(MaxOriginBytes), o.Kind)
		return
	}
	im.Origin = o
}

// kib writes n bytes in KiB, rounded up.
func kib(n int) string { return fmt.Sprintf("%d KiB", (n+1023)>>10) }
