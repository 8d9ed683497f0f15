// whatif.js draws a sweep's chart and keeps its table current from GET /api/v1/sweeps/{id}
// while it runs, and reloads a plan's page when the plan ends. No inline scripts: the page
// passes everything through data-* attributes (strict CSP).
(function () {
  'use strict';

  var finalStatuses = { done: true, failed: true, cancelled: true };

  function $(id) { return document.getElementById(id); }

  function figure(point, key) {
    var figs = point.headline || [];
    for (var i = 0; i < figs.length; i++) {
      if (figs[i].key === key) { return figs[i].value; }
    }
    return null;
  }

  function figureOf(point, key) {
    var figs = point.headline || [];
    for (var i = 0; i < figs.length; i++) {
      if (figs[i].key === key) { return figs[i]; }
    }
    return null;
  }

  // Readable figures, as web/format's Readable writes them on every page (about three
  // significant digits, times in a unit by their size); the exact value goes in the title.
  function group(s) {
    var neg = s.charAt(0) === '-';
    if (neg) { s = s.slice(1); }
    var parts = s.split('.');
    var ip = parts[0];
    if (ip.length > 4) {
      var out = '', lead = ip.length % 3;
      if (lead > 0) { out = ip.slice(0, lead); }
      for (var i = lead; i < ip.length; i += 3) { out += (out ? '\u202f' : '') + ip.slice(i, i + 3); }
      ip = out;
    }
    return (neg ? '-' : '') + ip + (parts.length > 1 ? '.' + parts[1] : '');
  }
  function sig3(x) {
    if (!isFinite(x)) { return '—'; }
    if (x === 0) { return '0'; }
    var d = 2 - Math.floor(Math.log10(Math.abs(x)));
    var out = d <= 0 ? String(Math.round(x)) : x.toFixed(d);
    if (out.indexOf('.') >= 0) { out = out.replace(/0+$/, '').replace(/\.$/, ''); }
    if (out === '-0') { out = '0'; }
    return group(out);
  }
  function round3(x) {
    if (x === 0) { return 0; }
    var d = 2 - Math.floor(Math.log10(Math.abs(x)));
    if (d <= 0) { return Math.round(x); }
    var p = Math.pow(10, d);
    return Math.round(x * p) / p;
  }
  function exactNumber(v) {
    var r = Math.round(v * 1e6) / 1e6;
    if (r === 0) { r = 0; }
    return group(String(r));
  }
  function duration(ms) {
    if (Math.abs(round3(ms)) < 1000) { return sig3(ms) + ' ms'; }
    if (Math.abs(round3(ms / 1000)) < 1000) { return sig3(ms / 1000) + ' s'; }
    if (Math.abs(round3(ms / 60000)) < 60) { return sig3(ms / 60000) + ' min'; }
    var sign = ms < 0 ? '-' : '';
    var secs = Math.round(Math.abs(ms) / 1000);
    var pad = function (n) { return (n < 10 ? '0' : '') + n; };
    return sign + Math.floor(secs / 3600) + ':' + pad(Math.floor(secs / 60) % 60) + ':' + pad(secs % 60) + ' h';
  }
  var singular = { requests: 'request', workers: 'worker', pulls: 'pull', moves: 'move', decisions: 'decision' };
  function withUnit(n, v, unit) {
    if (!unit) { return n; }
    return n + ' ' + (v === 1 && singular[unit] ? singular[unit] : unit);
  }
  function readable(v, unit) {
    if (typeof v !== 'number' || !isFinite(v)) { return '—'; }
    switch (unit) {
      case 'share': return sig3(v * 100) + ' %';
      case 'ms': return duration(v);
      case 's': return duration(v * 1000);
      case 'GPU-h': case 'GPU-hours': return group((Math.round(v * 100) / 100 || 0).toFixed(2)) + ' GPU-h';
    }
    var s = (v === Math.trunc(v) && Math.abs(v) < 1e6) ? exactNumber(v) : sig3(v);
    return withUnit(s, v, unit);
  }
  function exact(v, unit) {
    if (typeof v !== 'number') { return ''; }
    if (unit === 'share') { return exactNumber(v * 100) + ' %'; }
    return withUnit(exactNumber(v), v, unit);
  }

  function text(v) {
    if (v === null || v === undefined) { return '—'; }
    if (typeof v === 'number') { return (Math.round(v * 1000) / 1000).toLocaleString('en-US'); }
    return String(v);
  }

  // outcomeLabel is the outcome's name with its unit, as the Outcome menu shows it.
  function outcomeLabel(key) {
    var sel = $('sweep-outcome');
    if (sel) {
      for (var i = 0; i < sel.options.length; i++) {
        if (sel.options[i].value === key) { return sel.options[i].text; }
      }
    }
    return key;
  }

  function meetsLimits(point) {
    if (point.status !== 'done') { return false; }
    var lim = parseFloat(($('sweep-limit-ttft') || {}).value);
    if (!isNaN(lim)) {
      var t = figure(point, 'ttft_p99_ms');
      if (t === null || t > lim) { return false; }
    }
    if (($('sweep-limit-killed') || {}).checked) {
      var k = figure(point, 'requests_killed');
      if (k === null || k > 0) { return false; }
    }
    return true;
  }

  function numericAxes(sweep) {
    var out = [];
    sweep.axes.forEach(function (ax, i) {
      if (ax.values.every(function (v) { return typeof v === 'number'; })) { out.push(i); }
    });
    return out;
  }

  function lineOption(sweep, key, xi) {
    var groups = {}; var order = [];
    sweep.points.forEach(function (p) {
      var name = sweep.axes.map(function (ax, i) { return i === xi ? null : ax.path + '=' + text(p.values[i]); })
        .filter(Boolean).join(', ') || sweep.axes[xi].path;
      if (!groups[name]) { groups[name] = []; order.push(name); }
      var y = figure(p, key);
      var ok = meetsLimits(p);
      groups[name].push({ value: [p.values[xi], y], runId: p.run_id,
        symbol: ok ? 'circle' : 'emptyCircle', symbolSize: ok ? 10 : 7 });
    });
    var numeric = typeof sweep.axes[xi].values[0] === 'number';
    return {
      animation: false,
      legend: { top: 4, type: 'scroll' },
      grid: { top: 44, bottom: 48, left: 72, right: 28 },
      tooltip: { trigger: 'item' },
      xAxis: { type: numeric ? 'value' : 'category', name: sweep.axes[xi].path, nameLocation: 'middle', nameGap: 28, scale: true,
        data: numeric ? undefined : sweep.axes[xi].values.map(text) },
      yAxis: { type: 'value', name: outcomeLabel(key), nameLocation: 'middle', nameGap: 52, scale: true },
      series: order.map(function (name) {
        return { name: name, type: 'line', data: groups[name], connectNulls: false };
      })
    };
  }

  function heatmapOption(sweep, key, xi, yi) {
    var xs = sweep.axes[xi].values; var ys = sweep.axes[yi].values;
    var data = []; var min = Infinity; var max = -Infinity;
    sweep.points.forEach(function (p) {
      for (var i = 0; i < sweep.axes.length; i++) {
        if (i !== xi && i !== yi && p.values[i] !== sweep.axes[i].values[0]) { return; } // other axes at their first value
      }
      var v = figure(p, key);
      if (v !== null) { min = Math.min(min, v); max = Math.max(max, v); }
      data.push({ value: [xs.indexOf(p.values[xi]), ys.indexOf(p.values[yi]), v], runId: p.run_id,
        itemStyle: { opacity: meetsLimits(p) ? 1 : 0.3 } });
    });
    if (min === Infinity) { min = 0; max = 1; }
    return {
      animation: false,
      grid: { top: 24, bottom: 80, left: 90, right: 28 },
      tooltip: { trigger: 'item' },
      xAxis: { type: 'category', data: xs.map(text), name: sweep.axes[xi].path, nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'category', data: ys.map(text), name: sweep.axes[yi].path },
      visualMap: { min: min, max: max, calculable: true, orient: 'horizontal', left: 'center', bottom: 4 },
      series: [{ name: key, type: 'heatmap', data: data, label: { show: true } }]
    };
  }

  function drawChart(sweep) {
    var el = $('sweep-chart');
    if (!el || typeof echarts === 'undefined') { return; }
    var key = $('sweep-outcome').value;
    var nums = numericAxes(sweep);
    var xSel = $('sweep-x');
    var xi = xSel && xSel.value !== '' ? parseInt(xSel.value, 10) : (nums.length ? nums[0] : 0);
    var option;
    if ($('sweep-view').value === 'heatmap' && nums.length >= 2) {
      var yi = nums[0] === xi ? nums[1] : nums[0];
      option = heatmapOption(sweep, key, xi, yi);
    } else {
      option = lineOption(sweep, key, xi);
    }
    var chart = echarts.getInstanceByDom(el) || echarts.init(el, null, { renderer: 'canvas' });
    chart.setOption(option, true);
    el.setAttribute('data-chart-ready', 'true');
    el.setAttribute('data-points-drawn', String(sweep.points.filter(function (p) { return figure(p, key) !== null; }).length));
  }

  function cell(content, cls) {
    var td = document.createElement('td');
    if (cls) { td.className = cls; }
    if (content instanceof Node) { td.appendChild(content); } else { td.textContent = content; }
    return td;
  }

  var drawnTable = '';
  function drawTable(sweep, columns) {
    var body = $('sweep-rows');
    if (!body) { return; }
    // Rebuild only when the data changed: a rebuild while the user clicks a checkbox (a limit
    // field losing focus fires change) would swallow the click. Limits only restyle rows.
    var fingerprint = JSON.stringify(sweep.points);
    if (fingerprint === drawnTable) {
      Array.prototype.forEach.call(body.rows, function (tr, i) {
        tr.className = meetsLimits(sweep.points[i]) ? 'meets-limits' : '';
      });
      return;
    }
    drawnTable = fingerprint;
    var checked = {};
    Array.prototype.forEach.call(body.querySelectorAll('.sweep-pick:checked'), function (c) { checked[c.value] = true; });
    body.textContent = '';
    // Each cell carries its column's label, so a phone-width table stacks into cards.
    var labels = Array.prototype.map.call(body.parentNode.tHead.rows[0].cells, function (th) { return th.textContent; });
    sweep.points.forEach(function (p) {
      var tr = document.createElement('tr');
      tr.setAttribute('data-testid', 'sweep-row');
      if (meetsLimits(p)) { tr.className = 'meets-limits'; }
      var box = document.createElement('input');
      box.type = 'checkbox'; box.className = 'sweep-pick'; box.value = p.run_id; box.checked = !!checked[p.run_id];
      box.setAttribute('aria-label', 'compare this point');
      tr.appendChild(cell(box));
      p.values.forEach(function (v) { tr.appendChild(cell(text(v))); });
      var badge = document.createElement('span');
      badge.className = 'status status-' + p.status; badge.setAttribute('data-testid', 'status'); badge.textContent = p.status;
      tr.appendChild(cell(badge));
      columns.forEach(function (k) {
        var f = figureOf(p, k);
        var v = f ? f.value : null;
        var td = cell(f && typeof v === 'number' ? readable(v, f.unit) : '—', 'num');
        var full = f ? exact(v, f.unit) : '';
        if (full && full !== td.textContent) { td.title = full; }
        tr.appendChild(td);
      });
      var a = document.createElement('a');
      a.href = p.url; a.textContent = p.run_id;
      tr.appendChild(cell(a));
      Array.prototype.forEach.call(tr.cells, function (td, i) { if (labels[i]) { td.setAttribute('data-label', labels[i]); } });
      body.appendChild(tr);
    });
    updateCompare();
  }

  var picks = [];
  function updateCompare() {
    var link = $('sweep-compare');
    if (!link) { return; }
    var boxes = document.querySelectorAll('.sweep-pick:checked');
    var ids = Array.prototype.map.call(boxes, function (b) { return b.value; });
    picks = picks.filter(function (id) { return ids.indexOf(id) >= 0; });
    ids.forEach(function (id) { if (picks.indexOf(id) < 0) { picks.push(id); } });
    while (picks.length > 2) {
      var drop = picks.shift();
      Array.prototype.forEach.call(boxes, function (b) { if (b.value === drop) { b.checked = false; } });
    }
    if (picks.length === 2) {
      link.href = '/compare?a=' + encodeURIComponent(picks[0]) + '&b=' + encodeURIComponent(picks[1]);
      link.setAttribute('aria-disabled', 'false');
    } else {
      link.removeAttribute('href');
      link.setAttribute('aria-disabled', 'true');
    }
  }

  function initSweep(root) {
    var api = root.getAttribute('data-sweep-api');
    var columns = (root.getAttribute('data-columns') || '').split(',').filter(Boolean);
    var sweep = null;
    var redraw = function () { if (sweep) { drawChart(sweep); drawTable(sweep, columns); } };
    ['sweep-outcome', 'sweep-x', 'sweep-view', 'sweep-limit-ttft', 'sweep-limit-killed'].forEach(function (id) {
      var el = $(id);
      if (el) { el.addEventListener('change', redraw); el.addEventListener('input', redraw); }
    });
    $('sweep-rows').addEventListener('change', function (e) {
      if (e.target && e.target.classList.contains('sweep-pick')) { updateCompare(); }
    });
    function poll() {
      fetch(api, { headers: { Accept: 'application/json' } }).then(function (r) {
        if (!r.ok) { throw new Error('HTTP ' + r.status); }
        return r.json();
      }).then(function (data) {
        sweep = data;
        var done = data.points.filter(function (p) { return p.status === 'done'; }).length;
        var prog = document.querySelector('[data-testid="sweep-progress"]');
        if (prog) { prog.textContent = done + ' of ' + data.points.length + ' points done'; }
        var badge = document.querySelector('.meta [data-testid="status"]');
        if (badge) { badge.textContent = data.status; badge.className = 'status status-' + data.status; }
        root.setAttribute('data-status', data.status);
        if (finalStatuses[data.status]) {
          var cancel = document.querySelector('[data-testid="sweep-cancel"]');
          if (cancel && cancel.form) { cancel.form.remove(); }
        }
        redraw();
        if (!finalStatuses[data.status]) { setTimeout(poll, 1000); }
      }).catch(function (err) {
        console.error('whatif.js: ' + err.message);
        setTimeout(poll, 3000);
      });
    }
    poll();
    window.addEventListener('resize', function () {
      var chart = echarts.getInstanceByDom($('sweep-chart'));
      if (chart) { chart.resize(); }
    });
  }

  function initPlan(root) {
    if (root.getAttribute('data-final') === 'true') { return; }
    var api = root.getAttribute('data-plan-api');
    function poll() {
      fetch(api, { headers: { Accept: 'application/json' } }).then(function (r) { return r.json(); }).then(function (data) {
        if (finalStatuses[data.status]) { window.location.reload(); return; }
        var prog = document.querySelector('[data-testid="plan-progress"]');
        if (prog) { prog.textContent = 'Simulating candidates: ' + data.submitted.length + ' submitted so far, ' +
          data.submitted.filter(function (s) { return s.status === 'done'; }).length + ' done.'; }
        setTimeout(poll, 1500);
      }).catch(function () { setTimeout(poll, 3000); });
    }
    poll();
  }

  function init() {
    var sweep = $('sweep');
    if (sweep) { initSweep(sweep); }
    var plan = $('plan');
    if (plan) { initPlan(plan); }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
