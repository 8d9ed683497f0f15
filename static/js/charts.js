// charts.js draws every chart the server rendered as <div data-echarts-option="{…}">.
// The option is built and validated in Go (web/charts*.go); this file only hands it to echarts.
// Where echarts needs a function, the option carries a name and the function comes from
// `registry` below, so the page needs neither eval nor inline scripts (strict CSP).
(function () {
  'use strict';

  var selector = '[data-echarts-option]';

  function fmtMS(v) {
    return (Math.round(v * 1000) / 1000).toString();
  }

  var registry = {
    // Gantt-like bar for one segment of a worker's drain: value = [row, fromMS, toMS].
    removalTimeline: function (params, api) {
      var row = api.value(0);
      var from = api.coord([api.value(1), row]);
      var to = api.coord([api.value(2), row]);
      var height = api.size([0, 1])[1] * 0.55;
      var cs = params.coordSys;
      var shape = echarts.graphic.clipRectByRect(
        { x: from[0], y: from[1] - height / 2, width: Math.max(to[0] - from[0], 2), height: height },
        { x: cs.x, y: cs.y, width: cs.width, height: cs.height }
      );
      return shape && { type: 'rect', transition: ['shape'], shape: shape, style: api.style() };
    },
    // Time axis labels of long runs: the data are ms from the run's start (web/charts timeAxis).
    clockMS: function (v) {
      var min = Math.round(v / 60000);
      var h = Math.floor(min / 60);
      var m = min % 60;
      return h + ':' + (m < 10 ? '0' : '') + m;
    },
    secondsMS: function (v) {
      return (Math.round(v / 100) / 10).toString();
    },
    // A point's own tooltip text, written in Go (a tune plan's settings and figures).
    dataTip: function (params) {
      return (params.data && params.data.tip) || params.name;
    },
    // Plain text: tooltips render in the canvas (renderMode richText), so no HTML here.
    removalTooltip: function (params) {
      var v = params.value;
      return params.seriesName + '\n' + fmtMS(v[1]) + ' → ' + fmtMS(v[2]) + ' ms (' + fmtMS(v[2] - v[1]) + ' ms)';
    }
  };

  function named(value) {
    return typeof value === 'string' && Object.prototype.hasOwnProperty.call(registry, value) ? registry[value] : value;
  }

  function pad2(n) { return (n < 10 ? '0' : '') + n; }

  // wallClock labels a time axis whose data are ms from the run's start with the UTC clock time
  // of the run's time 0 (data-clock-start-ms: a Prometheus load's first sample).
  function wallClock(startMS, seconds) {
    return function (v) {
      var d = new Date(startMS + v);
      var s = pad2(d.getUTCHours()) + ':' + pad2(d.getUTCMinutes());
      return seconds ? s + ':' + pad2(d.getUTCSeconds()) : s;
    };
  }

  // Swap registered names for their functions where echarts expects a function.
  function resolveFunctions(option, el) {
    var start = el && el.getAttribute('data-clock-start-ms');
    if (start) {
      [].concat(option.xAxis || []).forEach(function (a) {
        if (a.axisLabel && (a.axisLabel.formatter === 'clockMS' || a.axisLabel.formatter === 'secondsMS')) {
          a.axisLabel.formatter = wallClock(Number(start), a.axisLabel.formatter === 'secondsMS');
        }
      });
    }
    (option.series || []).forEach(function (s) {
      if (s.renderItem) { s.renderItem = named(s.renderItem); }
      if (s.tooltip && s.tooltip.formatter) { s.tooltip.formatter = named(s.tooltip.formatter); }
    });
    if (option.tooltip && option.tooltip.formatter) { option.tooltip.formatter = named(option.tooltip.formatter); }
    [].concat(option.xAxis || []).forEach(function (a) {
      if (a.axisLabel && a.axisLabel.formatter) { a.axisLabel.formatter = named(a.axisLabel.formatter); }
    });
    return option;
  }

  // fitTimeTicks refits a time axis' tick step to the chart's width and zoom window: the
  // smallest step of the axis' ladder (round clock or elapsed times, web/charts/ticks.go) that
  // keeps its labels tickMinGapPX apart. A window's edge gets a label only when it is a tick.
  function fitTimeTicks(chart) {
    var opt = chart.getOption();
    var ax = opt.xAxis && opt.xAxis[0];
    if (!ax || !ax.tickLadderMS || !ax.tickLadderMS.length) { return; }
    var grid = (opt.grid && opt.grid[0]) || {};
    var plotPX = chart.getWidth() - (parseFloat(grid.left) || 0) - (parseFloat(grid.right) || 0);
    var lo = ax.min || 0, hi = ax.max;
    var zoom = (opt.dataZoom || [])[0];
    if (zoom && typeof zoom.start === 'number' && typeof zoom.end === 'number') {
      var span = ax.max - (ax.min || 0);
      lo = (ax.min || 0) + span * zoom.start / 100;
      hi = (ax.min || 0) + span * zoom.end / 100;
    }
    var labels = Math.max(1, Math.floor(plotPX / (ax.tickMinGapPX || 64)));
    var ladder = ax.tickLadderMS, step = ladder[ladder.length - 1];
    for (var i = 0; i < ladder.length; i++) {
      if ((hi - lo) / ladder[i] <= labels) { step = ladder[i]; break; }
    }
    var onTick = function (v) { return Math.abs(v / step - Math.round(v / step)) < 1e-9; };
    var showMin = onTick(lo), showMax = onTick(hi);
    if (ax.interval === step && ax.axisLabel && ax.axisLabel.showMinLabel === showMin && ax.axisLabel.showMaxLabel === showMax) { return; }
    chart.setOption({ xAxis: [{ interval: step, axisLabel: { showMinLabel: showMin, showMaxLabel: showMax } }] });
  }

  function resize(chart) {
    chart.resize();
    fitTimeTicks(chart);
  }

  var observer = typeof ResizeObserver === 'function' ? new ResizeObserver(function (entries) {
    entries.forEach(function (e) {
      var chart = echarts.getInstanceByDom(e.target);
      if (chart) { resize(chart); }
    });
  }) : null;

  function draw(el) {
    if (echarts.getInstanceByDom(el)) { return; } // already drawn (htmx:load fires again)
    var option;
    try {
      option = JSON.parse(el.getAttribute('data-echarts-option'));
    } catch (err) {
      el.textContent = 'This chart could not be drawn; its table below has the same figures.';
      console.error('charts.js: bad option JSON in #' + el.id + ': ' + err.message);
      return;
    }
    var height = parseInt(el.getAttribute('data-height-px') || '0', 10);
    if (height > 0) { el.style.height = height + 'px'; }
    var chart = echarts.init(el, null, { renderer: 'canvas' });
    chart.setOption(resolveFunctions(option, el));
    fitTimeTicks(chart);
    chart.on('datazoom', function () { fitTimeTicks(chart); });
    // A point with a url (a tune plan's setting) opens its run; only the app's own run pages.
    chart.on('click', function (p) {
      var url = p.data && p.data.url;
      if (typeof url === 'string' && /^\/runs\/[A-Za-z0-9]+$/.test(url)) { window.location.assign(url); }
    });
    el.setAttribute('data-chart-ready', 'true');
    if (observer) { observer.observe(el); }
  }

  function drawAll(root) {
    if (typeof echarts === 'undefined') {
      console.error('charts.js: echarts is not loaded; include static/vendor/echarts/echarts.min.js first');
      return;
    }
    var scope = root && root.querySelectorAll ? root : document;
    if (scope.matches && scope.matches(selector)) { draw(scope); }
    Array.prototype.forEach.call(scope.querySelectorAll(selector), draw);
  }

  var resizeTimer = null;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      Array.prototype.forEach.call(document.querySelectorAll(selector), function (el) {
        var chart = echarts.getInstanceByDom(el);
        if (chart) { resize(chart); }
      });
    }, 100);
  });

  // htmx (if the page uses it) announces swapped-in content with htmx:load.
  document.addEventListener('htmx:load', function (e) { drawAll(e.detail && e.detail.elt); });

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', function () { drawAll(document); });
  } else {
    drawAll(document);
  }
})();
