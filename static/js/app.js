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
      if (text) {
        text.textContent = (data.status || "running") + ", " + pct + " %";
      }
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
  function renumber(container) {
    var rows = container.querySelectorAll("[data-schedule-row]");
    rows.forEach(function (row, i) {
      row.querySelectorAll("[name^='scale_in[']").forEach(function (input) {
        input.name = input.name.replace(/^scale_in\[\d+\]/, "scale_in[" + i + "]");
        if (input.id) {
          input.id = input.id.replace(/^scale_in\[\d+\]/, "scale_in[" + i + "]");
        }
      });
      row.querySelectorAll("label[for^='scale_in[']").forEach(function (label) {
        label.htmlFor = label.htmlFor.replace(/^scale_in\[\d+\]/, "scale_in[" + i + "]");
      });
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
        var list = container.querySelector("[data-schedule-rows]") || container;
        list.appendChild(fresh);
        renumber(container);
      }
    });
  }

  // Workload choice: show only the fieldset of the chosen workload type. Without JavaScript all
  // three stay visible and the server ignores the ones not chosen.
  function setupWorkload(select) {
    function sync() {
      document.querySelectorAll("[data-workload]").forEach(function (fs) {
        fs.hidden = fs.getAttribute("data-workload") !== select.value;
      });
    }
    select.addEventListener("change", sync);
    sync();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-run-events]").forEach(followRun);
    document.querySelectorAll("[data-schedule]").forEach(setupSchedule);
    var wl = document.querySelector("[data-workload-type]");
    if (wl) {
      setupWorkload(wl);
    }
  });
})();
