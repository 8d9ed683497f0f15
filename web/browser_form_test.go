//go:build browser

package web

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// visibleWorkloads lists the workload fieldsets a user can see.
const visibleWorkloads = `Array.from(document.querySelectorAll('fieldset[data-workload]:not([data-testid="day-helper"])')).filter(function (fs) {
  return !fs.hidden && fs.getClientRects().length > 0;
}).map(function (fs) { return fs.getAttribute('data-workload'); })`

// TestBrowserWorkloadSections: with JavaScript only the chosen workload's fields are shown, and
// choosing another type shows its fields instead; without JavaScript all three are shown.
func TestBrowserWorkloadSections(t *testing.T) {
	b := newBrowser(t)
	ts := startApp(t)
	b.do(t, "open the form", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`select[data-workload-type]`)))
	b.waitFor(t, "app.js to run", `document.readyState === 'complete'`, 10*time.Second)
	require.Equal(t, []string{"sessions"}, browserEval[[]string](t, b, visibleWorkloads))

	for _, choice := range []string{"trace", "requests", "sessions"} {
		b.do(t, "choose "+choice, chromedp.SetValue(chromedp.CSS(`select[data-workload-type]`), choice),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('select[data-workload-type]').dispatchEvent(new Event('change', {bubbles: true}))`))
		require.Equal(t, []string{choice}, browserEval[[]string](t, b, visibleWorkloads), "after choosing %s", choice)
	}
	require.Empty(t, b.problems(t))

	// Without JavaScript every section stays in view: the server ignores the unchosen ones.
	noJS := newBrowser(t)
	_, err := chromedp.Call(noJS.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	require.NoError(t, err)
	noJS.do(t, "open the form without JavaScript", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run"]`)))
	_, err = chromedp.Call(noJS.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false})
	require.NoError(t, err)
	require.Equal(t, []string{"sessions", "trace", "requests"}, browserEval[[]string](t, noJS, visibleWorkloads))
}

// TestBrowserFormShowsEveryProblem: four bad fields, one press of Run, four problems at once:
// each field marked aria-invalid and described by its message, the summary focused and its links
// taking the focus into their fields. Screenshots at 1,280 and 390 px.
func TestBrowserFormShowsEveryProblem(t *testing.T) {
	b := newBrowser(t)
	ts := startApp(t)
	b.do(t, "open the form", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run"]`)))
	b.waitFor(t, "app.js to run", `document.readyState === 'complete'`, 10*time.Second)
	// Add two rows and remove the first of them: the rows left are numbered 0 and 1, with every
	// attribute that names their fields.
	b.do(t, "add two schedule rows", chromedp.Click(chromedp.CSS(`[data-add-row]`)), chromedp.Click(chromedp.CSS(`[data-add-row]`)))
	require.Equal(t, 3, browserEval[int](t, b, `document.querySelectorAll('[data-schedule-rows] [data-schedule-row]').length`))
	b.do(t, "mark the last row", chromedp.SetValue(chromedp.CSS(`[id="scale_in[2].grace_ms"]`), "5"))
	b.do(t, "remove the second row", chromedp.Click(chromedp.CSS(`[data-schedule-rows] [data-schedule-row]:nth-child(2) [data-remove-row]`)))
	require.Equal(t, []string{"scale_in[1].grace_ms", "5", "help-scale_in[1].grace_ms", "help-scale_in[1].grace_ms", "scale_in[1].grace_ms", "Action 2", "2"},
		browserEval[[]string](t, b, `(function () {
		  var row = document.querySelectorAll('[data-schedule-rows] [data-schedule-row]')[1];
		  var input = row.querySelector('[name$=".grace_ms"]');
		  var help = document.getElementById(input.getAttribute('aria-describedby'));
		  return [input.name, input.value, input.getAttribute('aria-describedby'), help ? help.id : '',
		    row.querySelector('label[for$=".grace_ms"]').htmlFor, row.querySelector('[data-row-title]').textContent,
		    document.querySelector('input[name="scale_in_rows"]').value];
		})()`))
	b.do(t, "clear the moved row", chromedp.Evaluate[chromedp.Void](`document.getElementById('scale_in[1].grace_ms').value = ''`))
	bad := map[string]string{
		"fleet.gpu_blocks":        "lots",
		"kvcr.latency_ms":         "1,5",
		"scale_in[1].workers":     "1, x",
		"workload.sessions.turns": "0",
	}
	for name, v := range bad {
		b.do(t, "type into "+name, chromedp.SetValue(chromedp.CSS(`[id="`+name+`"]`), v))
	}
	b.do(t, "give the action its instant", chromedp.SetValue(chromedp.CSS(`[id="scale_in[1].at_ms"]`), "10"))
	b.do(t, "press Run", chromedp.Click(chromedp.CSS(`[data-testid="run"]`)))
	b.waitFor(t, "the form back with its problems", `document.readyState === 'complete' && !!document.querySelector('[data-error-summary]')`, 20*time.Second)

	require.True(t, browserEval[bool](t, b, `document.activeElement === document.querySelector('[data-error-summary]')`), "the summary has the focus")
	links := browserEval[[]string](t, b, `Array.from(document.querySelectorAll('[data-error-summary] a[data-error-link]')).map(function (a) { return a.getAttribute('href') + ' ' + a.textContent; })`)
	require.Len(t, links, 4, "%v", links)
	// The empty row 0 was skipped: the bad ids are the first action, shown in the row they were typed in.
	require.True(t, strings.HasPrefix(links[2], "#scale_in[1].workers "), "%v", links)
	for name := range bad {
		state := browserEval[[]string](t, b, `(function () {
		  var el = document.getElementById(`+strconv.Quote(name)+`);
		  var ids = (el.getAttribute('aria-describedby') || '').split(' ');
		  var msg = document.getElementById(ids[0]);
		  return [el.getAttribute('aria-invalid') || '', ids[0], msg ? msg.textContent : '', el.value];
		})()`)
		require.Equal(t, []string{"true", "error-" + name}, state[:2], name)
		require.NotEmpty(t, state[2], "%s has its message", name)
		require.Equal(t, bad[name], state[3], "%s keeps what was typed", name)
	}
	b.screenshot(t, "form-errors-1280")

	b.do(t, "follow the third link", chromedp.Click(chromedp.CSS(`[data-error-summary] li:nth-child(3) a`)))
	require.Equal(t, "scale_in[1].workers", browserEval[string](t, b, `document.activeElement ? document.activeElement.id : ''`))

	b.do(t, "a phone's width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.screenshot(t, "form-errors-390")
	require.LessOrEqual(t, browserEval[int](t, b, `document.documentElement.scrollWidth`), 390, "nothing sticks out sideways at 390 px")
	var problems []string
	for _, p := range b.problems(t) {
		if !strings.Contains(p, "status of 422") { // the form's answer, logged by Chromium
			problems = append(problems, p)
		}
	}
	require.Empty(t, problems)
}

// TestBrowserFormScreenshots: the fresh form at a laptop's and a phone's width.
func TestBrowserFormScreenshots(t *testing.T) {
	b := newBrowser(t)
	ts := startApp(t)
	for _, width := range []int64{1280, 390} {
		b.do(t, "set the width", chromedp.EmulateViewport(width, 900))
		b.do(t, "open the form", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run"]`)))
		b.waitFor(t, "app.js to run", `document.readyState === 'complete'`, 10*time.Second)
		b.screenshot(t, "form-"+strconv.FormatInt(width, 10))
		require.LessOrEqual(t, browserEval[int64](t, b, `document.documentElement.scrollWidth`), width, "nothing sticks out sideways")
	}
	require.Empty(t, b.problems(t))
}
