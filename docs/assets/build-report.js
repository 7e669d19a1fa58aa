// Renders site/build-report.json (written by sitebuild/report.py) as a table.
(function () {
  const box = document.getElementById("build-report-table");
  if (!box) return;
  const cell = (tag, text) => {
    const el = document.createElement(tag);
    el.textContent = text;
    return el;
  };
  fetch("../build-report.json")
    .then((response) => {
      if (!response.ok) throw new Error(response.status + " " + response.statusText);
      return response.json();
    })
    .then((report) => {
      const rows = [...report.snippets].sort((a, b) => b.seconds - a.seconds);
      const devices = [...new Set(rows.map((r) => r.device))].join(", ");
      const torch = [...new Set(rows.map((r) => r.torch))].join(", ");
      const profiles = [...new Set(rows.map((r) => r.profile))].join(", ");
      const summary = cell(
        "p",
        `${rows.length} snippets, ${rows.reduce((n, r) => n + r.figures.length, 0)} figures, ` +
          `${rows.reduce((n, r) => n + r.tables, 0)} tables; profile ${profiles}; device ${devices}; ` +
          `torch ${torch}; ` +
          `${report.total_seconds.toFixed(1)} s of snippet time.`
      );
      const table = document.createElement("table");
      const head = table.createTHead().insertRow();
      ["Snippet", "Page", "Figures", "Tables", "Device", "torch", "Seconds"].forEach((h) =>
        head.appendChild(cell("th", h))
      );
      const body = table.createTBody();
      rows.forEach((r) => {
        const row = body.insertRow();
        row.appendChild(cell("td", r.snippet));
        row.appendChild(cell("td", r.page));
        row.appendChild(cell("td", r.figures.join(", ") || "—"));
        row.appendChild(cell("td", String(r.tables)));
        row.appendChild(cell("td", r.device));
        row.appendChild(cell("td", r.torch));
        row.appendChild(cell("td", r.seconds.toFixed(2) + (r.ran ? "" : " (an earlier run)")));
      });
      const wrapper = document.createElement("div");
      wrapper.className = "md-typeset__scrollwrap";
      const inner = document.createElement("div");
      inner.className = "md-typeset__table";
      inner.appendChild(table);
      wrapper.appendChild(inner);
      box.replaceChildren(summary, wrapper);
    })
    .catch((error) => {
      box.replaceChildren(cell("p", "Could not read build-report.json: " + error.message));
    });
})();
