// Scale-in Planner: progressive enhancement only. Every page works without this file; with it,
// progress bars follow server-sent events instead of page refreshes, and the scale-in schedule
// gains add/remove buttons that do not need a round trip. No inline handlers: the CSP forbids them.
(function () {
  "use strict";

  // Live progress: each [data-run-events] element listens to its run's event stream and reloads
  // the page once the run has ended, so the server renders the finished state.
  function followRun(el) {
    var url = el.getAttribute("data-run-events");
    if (!url || typeof EventSource === "undefined") {
      return;
    }
    var bar = el.querySelector("progress");
    var text = el.querySelector("[data-progress-text]");
    var source = new EventSource(url);
    source.addEventListener("progress", function (ev) {
      var data;
      try {
        data = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      var pct = Math.round((data.progress || 0) * 1000) / 10;
      if (bar) {
        bar.value = data.progress || 0;
      }
      var status = data.status || "running";
      if (text) {
        text.textContent = status + ", " + pct + " %";
      }
      // The run's badge says what the bar says ("running", not a stale "queued").
      var id = url.replace(/^\/runs\//, "").replace(/\/events$/, "");
      document.querySelectorAll("[data-status-run]").forEach(function (b) {
        if (b.getAttribute("data-status-run") === id && b.textContent !== status) {
          b.textContent = status;
          b.className = "status status-" + status;
        }
      });
    });
    ["done", "failed", "cancelled"].forEach(function (name) {
      source.addEventListener(name, function () {
        source.close();
        window.location.reload();
      });
    });
  }

  // Schedule editor: rows are numbered scale_in[0], scale_in[1], … so that validation errors
  // (which name paths like scale_in[1].count) land beside their field; renumber after edits.
  // Every attribute that carries a row's field name (name, id, for, the ids of its error and
  // help, aria-describedby, data-testid) follows.
  var rowAttrs = ["name", "id", "for", "aria-describedby", "data-testid"];
  var rowIndex = /scale_in\[\d+\]/g;

  function renumber(container) {
    var rows = container.querySelectorAll("[data-schedule-row]");
    rows.forEach(function (row, i) {
      var name = "scale_in[" + i + "]";
      [row].concat(Array.prototype.slice.call(row.querySelectorAll("*"))).forEach(function (el) {
        rowAttrs.forEach(function (attr) {
          var v = el.getAttribute(attr);
          if (v && v.indexOf("scale_in[") >= 0) {
            el.setAttribute(attr, v.replace(rowIndex, name));
          }
        });
      });
      var remove = row.querySelector("[data-remove-row]");
      if (remove) {
        remove.value = "remove_row:" + i;
      }
      var title = row.querySelector("[data-row-title]");
      if (title) {
        title.textContent = "Action " + (i + 1);
      }
    });
    var count = container.querySelector("input[name='scale_in_rows']");
    if (count) {
      count.value = String(rows.length);
    }
  }

  function setupSchedule(container) {
    container.addEventListener("click", function (ev) {
      var remove = ev.target.closest("[data-remove-row]");
      if (remove) {
        ev.preventDefault();
        var row = remove.closest("[data-schedule-row]");
        if (row) {
          row.remove();
          renumber(container);
        }
        return;
      }
      var add = ev.target.closest("[data-add-row]");
      if (add) {
        ev.preventDefault();
        var rows = container.querySelectorAll("[data-schedule-row]");
        var last = rows[rows.length - 1];
        var template = container.querySelector("template[data-row-template]");
        var fresh;
        if (template) {
          fresh = template.content.firstElementChild.cloneNode(true);
        } else if (last) {
          fresh = last.cloneNode(true);
        } else {
          return;
        }
        fresh.querySelectorAll("input").forEach(function (input) {
          input.value = "";
        });
        fresh.querySelectorAll(".field-error").forEach(function (e) {
          e.remove();
        });
        fresh.querySelectorAll(".has-error").forEach(function (e) {
          e.classList.remove("has-error");
        });
        fresh.querySelectorAll("[aria-invalid]").forEach(function (e) {
          e.removeAttribute("aria-invalid");
          var ids = (e.getAttribute("aria-describedby") || "").split(" ").filter(function (id) {
            return id && id.indexOf("error-") !== 0;
          });
          if (ids.length) {
            e.setAttribute("aria-describedby", ids.join(" "));
          } else {
            e.removeAttribute("aria-describedby");
          }
        });
        var list = container.querySelector("[data-schedule-rows]") || container;
        list.appendChild(fresh);
        renumber(container);
      }
    });
  }

  // Workload choice: show only the fieldset of the type the [data-workload-type] select chooses.
  // Without JavaScript all three stay visible and the server ignores the ones not chosen.
  function setupWorkload(select) {
    function sync() {
      document.querySelectorAll("fieldset[data-workload]").forEach(function (fs) {
        fs.hidden = fs.getAttribute("data-workload") !== select.value;
      });
    }
    select.addEventListener("change", sync);
    sync();
  }

  // Scale-in choice: show the schedule or the autoscaler, as the [data-scale-in-mode] select
  // chooses. Without JavaScript both stay visible and the server uses only the chosen one.
  function setupScaleInMode(select) {
    function sync() {
      document.querySelectorAll("[data-scale-in]").forEach(function (el) {
        el.hidden = el.getAttribute("data-scale-in") !== select.value;
      });
    }
    select.addEventListener("change", sync);
    sync();
  }

  // Autoscaler: KEDA's avg warning follows the source and aggregate; a kv_usage metric proposes
  // a fraction target (0.7) when the target is not one; the behavior's directions show only
  // with a behavior chosen. Without JavaScript the server renders the same from the post.
  function setupAutoscaler() {
    var source = document.querySelector("select[data-autoscaler-source]");
    var aggregate = document.querySelector("select[data-autoscaler-aggregate]");
    var warning = document.querySelector("[data-avg-warning]");
    function syncWarning() {
      if (source && aggregate && warning) {
        warning.hidden = !(source.value === "external" && aggregate.value === "avg");
      }
    }
    [source, aggregate].forEach(function (el) {
      if (el) {
        el.addEventListener("change", syncWarning);
      }
    });
    syncWarning();
    var metric = document.querySelector("select[data-autoscaler-metric]");
    var target = document.querySelector("input[data-autoscaler-target]");
    if (metric && target) {
      metric.addEventListener("change", function () {
        var t = parseFloat(target.value);
        if (metric.value === "kv_usage" && !(t > 0 && t <= 1)) {
          target.value = "0.7";
        }
        target.placeholder = metric.value === "kv_usage" ? "0.7" : "";
      });
    }
    var mode = document.querySelector("select[data-behavior-mode]");
    if (mode) {
      var sync = function () {
        document.querySelectorAll("[data-behavior-rules]").forEach(function (fs) {
          fs.hidden = mode.value !== "set";
        });
      };
      mode.addEventListener("change", sync);
      sync();
    }
  }

  // Error summary: it takes the focus when the page loads (a screen reader announces it, and
  // Tab goes on into its links); a link moves the focus into its field, not only the view.
  function setupErrorSummary(summary) {
    summary.addEventListener("click", function (ev) {
      var link = ev.target.closest("a[data-error-link]");
      if (!link) {
        return;
      }
      var id = decodeURIComponent(link.getAttribute("href").slice(1));
      var target = document.getElementById(id);
      if (!target) {
        return;
      }
      ev.preventDefault();
      var fieldset = target.closest("fieldset[hidden]");
      if (fieldset) {
        fieldset.hidden = false;
      }
      target.scrollIntoView({ block: "center" });
      target.focus({ preventScroll: true });
    });
    summary.focus();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-run-events]").forEach(followRun);
    document.querySelectorAll("[data-schedule]").forEach(setupSchedule);
    var wl = document.querySelector("select[data-workload-type]");
    if (wl) {
      setupWorkload(wl);
    }
    var mode = document.querySelector("select[data-scale-in-mode]");
    if (mode) {
      setupScaleInMode(mode);
    }
    setupAutoscaler();
    var summary = document.querySelector("[data-error-summary]");
    if (summary) {
      setupErrorSummary(summary);
    }
  });
})();
