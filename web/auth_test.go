package web

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// proxyAddr is where httptest.NewRequest's requests come from (192.0.2.1): the trusted proxy in
// these tests. strangerAddr is a client that talks to the port directly.
const strangerAddr = "198.51.100.7:40000"

// withUsers is an Access with identities from a proxy at 192.0.2.0/24; root is the admin.
func withUsers(a Access) Access {
	a.UserHeader = "X-Forwarded-User"
	a.GroupsHeader = "X-Forwarded-Groups"
	a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	a.AdminUsers = []string{"root"}
	a.AdminGroups = []string{"ops"}
	return a
}

// newAccessServer is newFakeServer with access rules, its runs left queued; runsPerMinute 0
// is 1000.
func newAccessServer(t *testing.T, cfg runs.Config, access Access, runsPerMinute int) *Server {
	t.Helper()
	if runsPerMinute == 0 {
		runsPerMinute = 1000
	}
	return newFakeApp(t, cfg, false, Config{RunsPerMinute: runsPerMinute, Access: access})
}

// as sends req as user through the trusted proxy ("" sends no user header).
func as(t *testing.T, s *Server, user string, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	if user != "" {
		req.Header.Set("X-Forwarded-User", user)
	}
	return do(t, s.Handler(), req)
}

func jsonReq(method, target, body string) *http.Request {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

func TestDNSRebindingRefused(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, Access{AllowedHosts: DefaultAllowedHosts("example.com:80")}, 0) // httptest.NewRequest says Host: example.com
	id := submitAPI(t, s, testScenario("victim"))

	// The probe's reproduction (finding M5): a page on a rebound name posts "same-origin".
	req := httptest.NewRequest(http.MethodPost, "/runs/"+id+"/cancel", nil)
	req.Host = "rebind.evil.example:8080"
	req.Header.Set("Origin", "http://rebind.evil.example:8080")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	rec := do(t, s.Handler(), req)
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Contains(t, rec.Body.String(), "-allowed-hosts")
	run, err := s.store.GetRun(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, store.StatusQueued, run.Status, "the rebound cancel must not reach the run")

	req = httptest.NewRequest(http.MethodGet, "/api/v1/runs", nil)
	req.Host = "rebind.evil.example:8080"
	rec = do(t, s.Handler(), req)
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Contains(t, rec.Body.String(), `"error"`, "the API answers JSON")
	for _, probe := range []string{"/healthz", "/livez"} {
		req = httptest.NewRequest(http.MethodGet, probe, nil)
		req.Host = "rebind.evil.example:8080"
		assert.Equal(t, http.StatusOK, do(t, s.Handler(), req).Code, "a probe by any name: %s", probe)
	}

	for _, host := range []string{"localhost:8080", "LOCALHOST", "127.0.0.1:8080", "[::1]:8080", "10.1.2.3", "app.localhost:8080"} {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/runs", nil)
		req.Host = host
		assert.Equal(t, http.StatusOK, do(t, s.Handler(), req).Code, host)
	}
}

func TestAllowedHosts(t *testing.T) {
	assert.Equal(t, []string{"localhost", "*.localhost"}, DefaultAllowedHosts("0.0.0.0:8080"))
	assert.Equal(t, []string{"localhost", "*.localhost"}, DefaultAllowedHosts(":8080"))
	assert.Equal(t, []string{"localhost", "*.localhost", "planner.internal"}, DefaultAllowedHosts("Planner.internal:80"))
	for _, c := range []struct {
		patterns []string
		host     string
		want     bool
	}{
		{[]string{"planner.example.com"}, "planner.example.com", true},
		{[]string{"*.example.com"}, "a.b.example.com", true},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"*.example.com"}, "evilexample.com", false},
		{[]string{"*"}, "anything", true},
		{[]string{"planner.example.com."}, "planner.example.com", true},
		{nil, "localhost", false},
	} {
		assert.Equal(t, c.want, matchesHost(c.patterns, c.host), "%v %s", c.patterns, c.host)
	}
	assert.Equal(t, "planner.example.com", hostName("Planner.Example.COM.:443"))
	assert.Equal(t, "::1", hostName("[::1]:8080"))
}

func TestProxyIdentity(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, withUsers(Access{}), 0)

	rec := as(t, s, "alice", httptest.NewRequest(http.MethodGet, "/runs", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "private, no-cache", rec.Header().Get("Cache-Control"), "pages depend on who asks once there are identities")

	// From an address that is not the proxy, the header is not believed: the request is refused.
	req := httptest.NewRequest(http.MethodGet, "/runs", nil)
	req.RemoteAddr = strangerAddr
	rec = as(t, s, "root", req)
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Contains(t, rec.Body.String(), "authenticating proxy")
	req = jsonReq(http.MethodPost, "/api/v1/runs", testScenario("direct"))
	req.RemoteAddr = strangerAddr
	assert.Equal(t, http.StatusForbidden, do(t, s.Handler(), req).Code)

	// Probes and assets need no user (the liveness probe, /livez, either: issue 19 M9).
	for _, probe := range []string{"/healthz", "/livez"} {
		req = httptest.NewRequest(http.MethodGet, probe, nil)
		req.RemoteAddr = strangerAddr
		assert.Equal(t, http.StatusOK, do(t, s.Handler(), req).Code, probe)
	}

	rec = as(t, s, "", httptest.NewRequest(http.MethodGet, "/runs", nil))
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Equal(t, "private", rec.Header().Get("Cache-Control"))
	assert.Contains(t, rec.Body.String(), "X-Forwarded-User")
	rec = as(t, s, "eve\x1b[2J", httptest.NewRequest(http.MethodGet, "/runs", nil))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "control characters")

	t.Run("ConfigChecked", func(t *testing.T) {
		st := openStore(t, t.TempDir()+"/c.db")
		for _, a := range []Access{
			{UserHeader: "X-Forwarded-User"},
			{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
			{AdminUsers: []string{"root"}},
			{Quotas: Quotas{QueuedRuns: 3}},
			func() Access { a := withUsers(Access{}); a.GroupsHeader = ""; return a }(),
			withUsers(Access{Quotas: Quotas{SweepPoints: -1}}),
			{AllowedHosts: []string{"https://planner.example.com"}},
			{AllowedHosts: []string{"planner.example.com:8080"}},
			{AllowedHosts: []string{"plan*.example.com"}},
		} {
			_, err := New(Config{Runs: newInlineRuns(t, runs.Config{Store: st}, false), Store: st, Access: a})
			assert.Error(t, err, "%+v", a)
		}
	})
}

func TestCancelByOwnerOrAdmin(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, withUsers(Access{}), 0)
	submit := func(user, name string) string {
		rec := as(t, s, user, jsonReq(http.MethodPost, "/api/v1/runs", testScenario(name)))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		var out apiCreated
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		return out.ID
	}
	status := func(id string) string {
		run, err := s.store.GetRun(context.Background(), id)
		require.NoError(t, err)
		return run.Status
	}

	t.Run("Run", func(t *testing.T) {
		id := submit("alice", "alice's run")
		rec := as(t, s, "bob", httptest.NewRequest(http.MethodPost, "/runs/"+id+"/cancel", nil))
		assert.Equal(t, http.StatusForbidden, rec.Code)
		assert.Contains(t, rec.Body.String(), "only &#34;alice&#34;, who created this run, or an admin")
		assert.Equal(t, store.StatusQueued, status(id))

		for range 2 { // built, then from the page cache
			rec := as(t, s, "bob", httptest.NewRequest(http.MethodGet, "/runs/"+id, nil))
			assert.Equal(t, "private, no-cache", rec.Header().Get("Cache-Control"), "a signed-in user's page is not for shared caches")
			page := parseHTML(t, rec.Body)
			assert.Equal(t, "Created by alice", strings.TrimSpace(byTestID(page, "created-by").Text()))
		}
		assert.Contains(t, as(t, s, "bob", httptest.NewRequest(http.MethodGet, "/api/v1/runs/"+id, nil)).Body.String(), `"created_by":"alice"`)
		list := parseHTML(t, as(t, s, "bob", httptest.NewRequest(http.MethodGet, "/runs", nil)).Body)
		assert.Equal(t, "by alice", strings.TrimSpace(byTestID(list, "run-created-by").First().Text()), "the runs list says who created each run")

		rec = as(t, s, "alice", httptest.NewRequest(http.MethodPost, "/runs/"+id+"/cancel", nil))
		assert.Equal(t, http.StatusSeeOther, rec.Code)
		assert.Equal(t, store.StatusCancelled, status(id))
		run, err := s.store.GetRun(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, "cancelled by alice before it started", run.Error, "the run says who cancelled it")

		admin := submit("alice", "cancelled by an admin")
		req := httptest.NewRequest(http.MethodPost, "/runs/"+admin+"/cancel", nil)
		req.Header.Set("X-Forwarded-Groups", "dev, ops")
		assert.Equal(t, http.StatusSeeOther, as(t, s, "carol", req).Code, "a member of the admin group may cancel anything")
		assert.Equal(t, store.StatusCancelled, status(admin))
	})

	t.Run("StoredBeforeOwners", func(t *testing.T) {
		id := submit("alice", "an old run")
		_, err := s.store.DB().ExecContext(context.Background(), `UPDATE runs SET owner = NULL WHERE id = ?`, id)
		require.NoError(t, err)
		rec := as(t, s, "alice", httptest.NewRequest(http.MethodPost, "/runs/"+id+"/cancel", nil))
		assert.Equal(t, http.StatusForbidden, rec.Code)
		assert.Contains(t, rec.Body.String(), "only an admin may cancel it")
		page := parseHTML(t, as(t, s, "alice", httptest.NewRequest(http.MethodGet, "/runs/"+id, nil)).Body)
		assert.Contains(t, byTestID(page, "created-by").Text(), "unknown")
		assert.Equal(t, http.StatusSeeOther, as(t, s, "root", httptest.NewRequest(http.MethodPost, "/runs/"+id+"/cancel", nil)).Code)
		assert.Equal(t, store.StatusCancelled, status(id))
	})

	t.Run("Plan", func(t *testing.T) {
		rec := as(t, s, "alice", jsonReq(http.MethodPost, "/api/v1/plans", planBody(fourWorkers(t, ""), `"goal": {"remove": 1, "start_ms": 100}`)))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		id := createdID(t, rec, rec.Body.Bytes())
		rec = as(t, s, "bob", jsonReq(http.MethodPost, "/api/v1/plans/"+id+"/cancel", ""))
		assert.Equal(t, http.StatusForbidden, rec.Code)
		assert.Contains(t, rec.Body.String(), "who created this plan")
		plan, err := s.store.PlanStatus(context.Background(), id)
		require.NoError(t, err)
		assert.NotEqual(t, store.StatusCancelled, plan)
		page := parseHTML(t, as(t, s, "bob", httptest.NewRequest(http.MethodGet, "/plans/"+id, nil)).Body)
		assert.Equal(t, "Created by alice", strings.TrimSpace(byTestID(page, "created-by").Text()))
		assert.Contains(t, as(t, s, "bob", httptest.NewRequest(http.MethodGet, "/api/v1/plans/"+id, nil)).Body.String(), `"created_by":"alice"`)

		rec = as(t, s, "alice", jsonReq(http.MethodPost, "/api/v1/plans/"+id+"/cancel", ""))
		assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		plan, err = s.store.PlanStatus(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, store.StatusCancelled, plan)
	})

	t.Run("SweepSharingARun", func(t *testing.T) {
		scenario := fourWorkers(t, `[{"at_ms": 100, "count": 1}]`)
		rec := as(t, s, "bob", jsonReq(http.MethodPost, "/api/v1/sweeps", sweepBody(scenario, `[{"path": "kvcr.bandwidth_gbps", "values": [7, 9]}]`)))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		sweep := createdID(t, rec, rec.Body.Bytes())
		sw, err := s.runs.Sweep(context.Background(), sweep)
		require.NoError(t, err)
		require.Len(t, sw.Points, 2)
		shared := sw.Points[0].RunID
		owner, err := s.store.OwnerOf(context.Background(), store.OwnedRun, shared)
		require.NoError(t, err)
		assert.Equal(t, "bob", owner.User)
		assert.Contains(t, as(t, s, "alice", httptest.NewRequest(http.MethodGet, "/api/v1/sweeps/"+sweep, nil)).Body.String(), `"created_by":"bob"`)

		rec = as(t, s, "alice", jsonReq(http.MethodPost, "/api/v1/sweeps/"+sweep+"/cancel", ""))
		assert.Equal(t, http.StatusForbidden, rec.Code, "alice may not cancel bob's sweep")

		// bob may cancel a point of his own sweep directly: only his sweep waits on it.
		rec = as(t, s, "bob", httptest.NewRequest(http.MethodPost, "/runs/"+shared+"/cancel", nil))
		assert.Equal(t, http.StatusSeeOther, rec.Code, "bob's own sweep does not stop bob")
		assert.Equal(t, store.StatusCancelled, status(shared))
	})

	t.Run("RunInAnotherUsersSweep", func(t *testing.T) {
		// dave submits a scenario directly; erin's sweep lists the same run: dave's cancel
		// would fail erin's sweep, so it is refused.
		scenario := fourWorkers(t, `[{"at_ms": 100, "count": 1}]`)
		rec := as(t, s, "dave", jsonReq(http.MethodPost, "/api/v1/sweeps", sweepBody(scenario, `[{"path": "kvcr.bandwidth_gbps", "values": [11]}]`)))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		daves := createdID(t, rec, rec.Body.Bytes())
		sw, err := s.runs.Sweep(context.Background(), daves)
		require.NoError(t, err)
		run := sw.Points[0].RunID
		rec = as(t, s, "erin", jsonReq(http.MethodPost, "/api/v1/sweeps", sweepBody(scenario, `[{"path": "kvcr.bandwidth_gbps", "values": [11, 13]}]`)))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		erins := createdID(t, rec, rec.Body.Bytes())

		rec = as(t, s, "dave", httptest.NewRequest(http.MethodPost, "/runs/"+run+"/cancel", nil))
		assert.Equal(t, http.StatusConflict, rec.Code)
		assert.Contains(t, rec.Body.String(), "/sweeps/"+erins)
		assert.Equal(t, store.StatusQueued, status(run))

		// dave cancelling his own sweep spares the run erin's sweep waits on.
		rec = as(t, s, "dave", jsonReq(http.MethodPost, "/api/v1/sweeps/"+daves+"/cancel", ""))
		assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		assert.Equal(t, store.StatusQueued, status(run))
	})
}

func TestReadOnly(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, testScenario("shared permalink"))
	other := submitAPI(t, s, testScenario("the other"))
	waitStatus(t, s, id, store.StatusDone)
	waitStatus(t, s, other, store.StatusDone)

	// A read-only server on the same database: the permalink-sharing use.
	ro := newAccessServer(t, runs.Config{Store: s.store}, Access{ReadOnly: true}, 0)
	for _, target := range []string{"/", "/runs", "/runs/" + id, "/runs/" + id + "/report.json", "/compare?a=" + id + "&b=" + other, "/api/v1/runs/" + id, "/traces"} {
		assert.Equal(t, http.StatusOK, get(t, ro, target).Code, target)
	}
	page := parseHTML(t, get(t, ro, "/runs/"+id).Body)
	assert.Equal(t, 1, byTestID(page, "read-only").Length(), "the page says the server is read-only")
	assert.Equal(t, http.StatusOK, postForm(t, ro, "/", url.Values{"preset": {"incident"}}).Code, "editing the form creates nothing")

	refused := []*http.Request{
		// Importing stores nothing but prepares a creation (finding M1 of 2026-12c: a viewer
		// kept a core busy importing): viewers are refused it.
		jsonReq(http.MethodPost, "/api/v1/hpa/import", `{}`),
		jsonReq(http.MethodPost, "/api/v1/runs", testScenario("new")),
		jsonReq(http.MethodPost, "/api/v1/sweeps", "{}"),
		jsonReq(http.MethodPost, "/api/v1/plans", "{}"),
		httptest.NewRequest(http.MethodPost, "/runs/"+id+"/cancel", nil),
		httptest.NewRequest(http.MethodPost, "/runs", strings.NewReader("scenario_json={}")),
		httptest.NewRequest(http.MethodPost, "/traces", nil),
		jsonReq(http.MethodPost, "/api/v1/calibrations", "{}"),
	}
	for _, req := range refused {
		rec := do(t, ro.Handler(), req)
		assert.Equal(t, http.StatusForbidden, rec.Code, req.URL.Path)
		assert.Contains(t, rec.Body.String(), "read-only", req.URL.Path)
	}

	// With identities, admins still act on a read-only server; others view.
	ra := newAccessServer(t, runs.Config{Store: s.store}, withUsers(Access{ReadOnly: true}), 0)
	assert.Equal(t, http.StatusForbidden, as(t, ra, "viewer", jsonReq(http.MethodPost, "/api/v1/runs", testScenario("v"))).Code)
	assert.Equal(t, http.StatusOK, as(t, ra, "viewer", httptest.NewRequest(http.MethodGet, "/runs/"+id, nil)).Code)
	assert.Equal(t, http.StatusAccepted, as(t, ra, "root", jsonReq(http.MethodPost, "/api/v1/runs", testScenario("by the admin"))).Code)
}

func TestQuotas(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, withUsers(Access{Quotas: Quotas{QueuedRuns: 2, SweepPoints: 3, UploadBytes: 600}}), 0)

	t.Run("QueuedRuns", func(t *testing.T) {
		for i, name := range []string{"q1", "q2"} {
			rec := as(t, s, "alice", jsonReq(http.MethodPost, "/api/v1/runs", testScenario(name)))
			require.Equal(t, http.StatusAccepted, rec.Code, "run %d: %s", i, rec.Body.String())
		}
		rec := as(t, s, "alice", jsonReq(http.MethodPost, "/api/v1/runs", testScenario("q3")))
		assert.Equal(t, http.StatusTooManyRequests, rec.Code)
		assert.Contains(t, rec.Body.String(), "-quota-queued-runs")
		assert.Contains(t, rec.Body.String(), "frees as soon as one of them finishes")
		assert.Equal(t, "30", rec.Header().Get("Retry-After"))
		assert.Equal(t, http.StatusAccepted, as(t, s, "bob", jsonReq(http.MethodPost, "/api/v1/runs", testScenario("q3"))).Code, "bob has his own quota")
	})

	t.Run("SweepPoints", func(t *testing.T) {
		scenario := fourWorkers(t, `[{"at_ms": 100, "count": 1}]`)
		rec := as(t, s, "carol", jsonReq(http.MethodPost, "/api/v1/sweeps", sweepBody(scenario, `[{"path": "kvcr.bandwidth_gbps", "values": [1, 2, 3, 4]}]`)))
		assert.Equal(t, http.StatusTooManyRequests, rec.Code)
		assert.Contains(t, rec.Body.String(), "-quota-sweep-points")
		rec = as(t, s, "carol", jsonReq(http.MethodPost, "/api/v1/sweeps", sweepBody(scenario, `[{"path": "kvcr.bandwidth_gbps", "values": [1, 2]}]`)))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		rec = as(t, s, "carol", jsonReq(http.MethodPost, "/api/v1/sweeps", sweepBody(scenario, `[{"path": "kvcr.bandwidth_gbps", "values": [5, 6]}]`)))
		assert.Equal(t, http.StatusTooManyRequests, rec.Code)
		assert.Contains(t, rec.Body.String(), "2 points not yet finished")
		assert.Equal(t, "30", rec.Header().Get("Retry-After"), "it frees as the points finish")
	})

	t.Run("UploadBytes", func(t *testing.T) {
		upload := func(user, content string) *httptest.ResponseRecorder {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			fw, err := mw.CreateFormFile("file", "t.jsonl")
			require.NoError(t, err)
			_, _ = fw.Write([]byte(content))
			require.NoError(t, mw.Close())
			req := httptest.NewRequest(http.MethodPost, "/traces", &body)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			return as(t, s, user, req)
		}
		line := `{"timestamp": 0, "input_length": 32, "output_length": 4, "hash_ids": [1, 2]}` + "\n"
		first := strings.Repeat(line, 5) // about 400 bytes
		require.Equal(t, http.StatusSeeOther, upload("dave", first).Code)
		assert.Equal(t, http.StatusSeeOther, upload("dave", first).Code, "the same trace again costs nothing")
		rec := upload("dave", strings.Repeat(line, 4))
		assert.Equal(t, http.StatusTooManyRequests, rec.Code)
		assert.Contains(t, rec.Body.String(), "-quota-upload-bytes")
		assert.Empty(t, rec.Header().Get("Retry-After"), "stored uploads do not free by themselves")
		assert.Equal(t, http.StatusSeeOther, upload("erin", strings.Repeat(line, 4)).Code)
		list := parseHTML(t, as(t, s, "erin", httptest.NewRequest(http.MethodGet, "/traces", nil)).Body)
		var by []string
		byTestID(list, "trace-created-by").Each(func(_ int, s *goquery.Selection) { by = append(by, strings.TrimSpace(s.Text())) })
		assert.ElementsMatch(t, []string{"by dave", "by erin"}, by, "the traces list says who uploaded each")
	})
}

func TestAdminQueueAndRateKey(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, withUsers(Access{}), 1)
	assert.Equal(t, http.StatusForbidden, as(t, s, "bob", httptest.NewRequest(http.MethodGet, "/admin/queue", nil)).Code)
	assert.Equal(t, http.StatusOK, as(t, s, "root", httptest.NewRequest(http.MethodGet, "/admin/queue", nil)).Code)
	open := newFakeServer(t, runs.Config{}, false)
	assert.Equal(t, http.StatusOK, get(t, open, "/admin/queue").Code, "without identities the queue page stays open")

	// Every request comes from the proxy's address: the rate limit counts by user.
	assert.Equal(t, http.StatusAccepted, as(t, s, "alice", jsonReq(http.MethodPost, "/api/v1/runs", testScenario("r1"))).Code)
	assert.Equal(t, http.StatusTooManyRequests, as(t, s, "alice", jsonReq(http.MethodPost, "/api/v1/runs", testScenario("r2"))).Code)
	assert.Equal(t, http.StatusAccepted, as(t, s, "bob", jsonReq(http.MethodPost, "/api/v1/runs", testScenario("r3"))).Code)
}
