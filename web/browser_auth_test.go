//go:build browser

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// signIn makes the tab's requests carry user in X-Forwarded-User, as the authenticating proxy
// in front of the server would (the test's server trusts 127.0.0.1, where the browser is).
func (b *browserSession) signIn(t *testing.T, user string) {
	t.Helper()
	_, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"X-Forwarded-User": user}})
	require.NoError(t, err, "sign in as %s", user)
}

// serveApp serves the app with access rules on st, its workers stopped (runs stay queued).
func serveApp(t *testing.T, st *store.Store, access Access) *httptest.Server {
	t.Helper()
	svc, err := runs.New(runs.Config{Store: st})
	require.NoError(t, err)
	app, err := New(Config{Runs: svc, Store: st, Access: access})
	require.NoError(t, err)
	ts := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = svc.Shutdown(ctx)
	})
	return ts
}

// TestBrowserTwoUsersAndAViewer: alice plans a scale-in from the form; bob opens her plan and
// presses Cancel, which is refused, and the plan goes on; alice cancels it. Then a viewer on a
// read-only server opens the permalinks and compares, and cannot start a run.
func TestBrowserTwoUsersAndAViewer(t *testing.T) {
	b := newBrowser(t)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "scalein.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	// Not started: the plan's runs stay queued, so the plan stays running while bob tries.
	app := serveApp(t, st, Access{UserHeader: "X-Forwarded-User",
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})

	b.signIn(t, "alice")
	b.do(t, "open the form with the incident preset",
		chromedp.Navigate(app.URL+"/?preset=incident"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="plan-a-scale-in"]`)))
	b.do(t, "press Plan a scale-in", chromedp.Click(chromedp.CSS(`[data-testid="plan-a-scale-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="start-plan"]`)))
	b.do(t, "plan it", chromedp.Click(chromedp.CSS(`[data-testid="start-plan"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="plan-cancel"]`)))
	planURL := browserEval[string](t, b, `location.href`)
	require.Contains(t, planURL, "/plans/")
	require.Equal(t, "Created by alice", browserEval[string](t, b, `document.querySelector('[data-testid="created-by"]').textContent.trim()`))
	// The page reloads itself while the plan runs (without JavaScript, a meta refresh; here, on each try).
	b.waitFor(t, "the plan to submit its first runs", `document.querySelectorAll('[data-testid="plan-submitted"] a').length > 0 || (location.reload(), false)`, 20*time.Second)
	runs := browserEval[[]string](t, b, `Array.from(document.querySelectorAll('[data-testid="plan-submitted"] a')).map(a => a.getAttribute('href'))`)
	require.GreaterOrEqual(t, len(runs), 1)

	b.signIn(t, "bob")
	b.do(t, "bob opens alice's plan and presses Cancel", chromedp.Navigate(planURL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="plan-cancel"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="plan-cancel"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-page"]`)))
	msg := browserEval[string](t, b, `document.querySelector('[data-testid="error-message"]').textContent`)
	require.Contains(t, msg, `only "alice", who created this plan, or an admin may cancel it`)
	b.screenshot(t, "cancel-refused")
	require.Equal(t, store.StatusRunning, planStatus(t, app.URL, planURL, "bob"), "bob's cancel must not reach the plan")

	b.signIn(t, "alice")
	b.do(t, "alice cancels her plan", chromedp.Navigate(planURL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="plan-cancel"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="plan-cancel"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="plan"][data-final="true"]`)))
	require.Equal(t, store.StatusCancelled, planStatus(t, app.URL, planURL, "alice"))

	// A viewer on a read-only server over the same database.
	viewer := serveApp(t, st, Access{ReadOnly: true})
	b.do(t, "the viewer opens a run's permalink", chromedp.Navigate(viewer.URL+runs[0]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="read-only"]`)))
	id := strings.TrimPrefix(runs[0], "/runs/")
	b.do(t, "and compares it", chromedp.Navigate(viewer.URL+"/compare?a="+id+"&b="+id),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="read-only"]`)))
	require.NotContains(t, browserEval[string](t, b, `document.title`), "Read-only")
	b.do(t, "the viewer presses Run on the form", chromedp.Navigate(viewer.URL+"/?preset=incident"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="run"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-page"]`)))
	require.Contains(t, browserEval[string](t, b, `document.querySelector('[data-testid="error-message"]').textContent`), "read-only")
	b.screenshot(t, "read-only-refused")
	var problems []string
	for _, p := range b.problems(t) {
		if !strings.Contains(p, "status of 403") { // the two refusals above, as expected
			problems = append(problems, p)
		}
	}
	require.Empty(t, problems, "console errors or CSP violations")
}

func planStatus(t *testing.T, base, planURL, user string) string {
	t.Helper()
	id := planURL[strings.LastIndex(planURL, "/")+1:]
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/plans/"+id, nil)
	require.NoError(t, err)
	req.Header.Set("X-Forwarded-User", user)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var p struct{ Status string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	return p.Status
}
