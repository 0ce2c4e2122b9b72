// opbench dashboard: sorts a table.sortable by the column whose head is clicked (again:
// the other way), by each cell's data-sort value, as numbers where the head says data-numeric.
(function () {
  "use strict";
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = Array.prototype.slice.call(table.querySelectorAll("thead th"));
    heads.forEach(function (th, col) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var numeric = th.getAttribute("data-numeric") === "1";
        // Numbers start high-first (the biggest kernel count on top), text A to Z.
        var current = th.getAttribute("aria-sort");
        var ascending = current === "none" ? !numeric : current === "descending";
        heads.forEach(function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var key = function (r) {
          var v = r.cells[col].getAttribute("data-sort") || "";
          return numeric ? parseFloat(v) : v.toLowerCase();
        };
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
