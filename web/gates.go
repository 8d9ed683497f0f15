package web

import (
	"net/http"
	"strconv"

	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web/format"
)

// A gate is a middleware that may refuse a request. Gates keep no list of paths: routes.go
// attaches each to the route groups it applies to, with its parameters (the body limit of the
// group, the runs a creation queues). Each is named, so that TestRouteGates can walk the router
// and tell which gates stand before every route; docs/deploy.md ("How a request is checked")
// has the table.
const (
	gateCrossOrigin = "cross-origin"   // a form posted from another site (Go's CrossOriginProtection)
	gateHosts       = "allowed hosts"  // a Host name not allowed: DNS rebinding (hosts.go)
	gateIdentity    = "identity"       // the user the trusted proxy names (auth.go)
	gateReadOnly    = "read-only"      // viewers of a read-only server store nothing (auth.go)
	gateBodyLimit   = "body limit"     // the request body's size (middleware.go)
	gateBodyType    = "JSON body"      // the API reads JSON (methods.go)
	gateRateLimit   = "rate limit"     // creations per client per minute (create_limit.go)
	gateTransform   = "transform rate" // imports per client per minute (transforms.go)
	gateRunQuota    = "run quota"      // a user's queued runs (quota.go)
	gateUploadQuota = "upload quota"   // a user's stored uploads, judged from Content-Length (quota.go)
	gateUploadPace  = "upload pace"    // an upload body's minimum rate and deadline (upload_body.go)
	gateAdmin       = "admin"          // admins only (auth.go)
	gateID          = "id"             // the shape of the {id} in the path (routes.go)
	gateOwner       = "owner"          // who may cancel a run, sweep or plan (auth.go)
)

// gated is a handler behind a named gate.
type gated struct {
	gate, param string
	http.Handler
}

// named makes mw the gate called name, with param saying how it is set for the route ("32 MiB",
// "queues 2 runs"); "" when it has no parameter.
func named(name, param string, mw func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return gated{gate: name, param: param, Handler: mw(next)} }
}

// gates are the server's gates, built once, so that a gate with state (the rate limit's counts)
// is one gate for every route it stands before.
type gates struct {
	crossOrigin, hosts, identity, admin, rateLimit, uploadPace func(http.Handler) http.Handler
	// imports of manifests and Prometheus answers (transforms.go): viewers refused, their rate
	prepares, transform func(http.Handler) http.Handler
	// read-only: a route that stores, or one that only re-renders a form (viewers may use it)
	stores, storesNothing func(http.Handler) http.Handler
	// body limit: forms and JSON, uploads
	formBody, uploadBody func(http.Handler) http.Handler
	// JSON body: the API's, and the calibration upload's JSON lines
	jsonBody, fpmBody func(http.Handler) http.Handler
	// upload quota: of a multipart form, of a bare body
	formUploadQuota, bareUploadQuota func(http.Handler) http.Handler
	// run quota: a creation that queues one run, or a pair
	runQuota1, runQuota2 func(http.Handler) http.Handler
	// owner, and id, of a run, sweep or plan
	cancelRun, cancelSweep, cancelPlan func(http.Handler) http.Handler
	runID, sweepID, planID             func(http.Handler) http.Handler
}

func (s *Server) gates() gates {
	runQuota := func(n int) func(http.Handler) http.Handler {
		return named(gateRunQuota, "queues "+strconv.Itoa(n)+" "+format.Plural(int64(n), "run", "runs"), s.runQuota(n))
	}
	cancel := func(kind store.OwnerKind) func(http.Handler) http.Handler {
		return named(gateOwner, kindWords[kind]+"'s owner or an admin", s.mayCancel(kind))
	}
	id := func(what string) func(http.Handler) http.Handler {
		return named(gateID, what, s.requireID(what))
	}
	return gates{
		crossOrigin:     named(gateCrossOrigin, "", s.crossOrigin()),
		hosts:           named(gateHosts, "", s.guardHosts),
		identity:        named(gateIdentity, "", s.identify),
		admin:           named(gateAdmin, "", s.requireAdmin),
		rateLimit:       named(gateRateLimit, strconv.Itoa(s.cfg.RunsPerMinute)+" a minute", s.createLimit()),
		uploadPace:      named(gateUploadPace, "", s.paceUpload),
		transform:       named(gateTransform, strconv.Itoa(transformsPerRun*s.cfg.RunsPerMinute)+" a minute", s.transformRate),
		prepares:        named(gateReadOnly, "prepares a creation: viewers refused", s.readOnly(true)),
		stores:          named(gateReadOnly, "stores: viewers refused", s.readOnly(true)),
		storesNothing:   named(gateReadOnly, "stores nothing: viewers may", s.readOnly(false)),
		formBody:        named(gateBodyLimit, format.BinaryBytes(maxFormBytes), s.limitBody(maxFormBytes)),
		uploadBody:      named(gateBodyLimit, format.BinaryBytes(maxUploadBodySize), s.limitBody(maxUploadBodySize)),
		jsonBody:        named(gateBodyType, "JSON", s.requireJSONBody(nil)),
		fpmBody:         named(gateBodyType, "JSON or JSON lines", s.requireJSONBody(fpmMediaTypes)),
		formUploadQuota: named(gateUploadQuota, "less multipart framing", s.uploadQuota(uploadFramingBytes)),
		bareUploadQuota: named(gateUploadQuota, "", s.uploadQuota(0)),
		runQuota1:       runQuota(1),
		runQuota2:       runQuota(2),
		cancelRun:       cancel(store.OwnedRun),
		cancelSweep:     cancel(store.OwnedSweep),
		cancelPlan:      cancel(store.OwnedPlan),
		runID:           id("run"),
		sweepID:         id("sweep"),
		planID:          id("plan"),
	}
}

// crossOrigin refuses a state-changing request that a browser sent from another site (CSRF),
// as Go's CrossOriginProtection judges it (Sec-Fetch-Site, Origin); safe methods pass.
func (s *Server) crossOrigin() func(http.Handler) http.Handler {
	protect := http.NewCrossOriginProtection()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if protect.Check(r) != nil {
				s.writeError(w, r, &Error{Status: http.StatusForbidden, Title: "Cross-origin request refused",
					Message: "this form was posted from another site; open the page on this server and submit it from there"})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
