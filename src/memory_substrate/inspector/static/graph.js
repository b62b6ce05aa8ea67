// The neighbourhood graph: fetch nodes and edges as JSON, draw them with the vendored cytoscape.
(function () {
  var box = document.getElementById("graph");
  if (!box || typeof cytoscape === "undefined") return;
  var status = document.getElementById("graph-status");
  var colours = { entity: "#3559e0", knowledge: "#e39b17", source: "#0f9d8a", node: "#9b46d6",
                  activity: "#6b7385", work_item: "#d6466f", missing: "#c0c4cf" };
  fetch(box.dataset.src, { credentials: "same-origin" })
    .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
    .then(function (g) {
      var cy = cytoscape({
        container: box,
        elements: g.nodes.concat(g.edges),
        style: [
          { selector: "node", style: { "label": "data(label)", "font-size": 9, "text-wrap": "ellipsis", "text-max-width": 120,
              "background-color": function (n) { return colours[n.data("type")] || "#888"; }, "width": 18, "height": 18,
              "color": "#1d2330", "text-valign": "bottom", "text-margin-y": 3 } },
          { selector: "node[?focus]", style: { "width": 30, "height": 30, "border-width": 3, "border-color": "#141a2b", "font-weight": "bold" } },
          { selector: "edge", style: { "width": 1.5, "line-color": "#b8bfd0", "target-arrow-color": "#b8bfd0",
              "target-arrow-shape": "triangle", "curve-style": "bezier", "label": "data(label)", "font-size": 8,
              "color": "#6b7385", "text-rotation": "autorotate" } }
        ],
        layout: { name: "preset" }
      });
      // Rings around the focus by hop distance: the focus, its neighbours, then theirs.
      var focus = cy.nodes("[?focus]");
      var depth = {};
      if (focus.length) { cy.elements().breadthFirstSearch({ roots: focus, directed: false,
        visit: function (v, e, u, i, d) { depth[v.id()] = d; } }); }
      cy.layout({ name: "concentric", animate: false, minNodeSpacing: 55, avoidOverlap: true,
                  concentric: function (n) { return 10 - (depth[n.id()] === undefined ? 9 : depth[n.id()]); },
                  levelWidth: function () { return 1; } }).run();
      if (cy.zoom() > 1.6) { cy.zoom(1.6); cy.center(); }  // few nodes: keep labels a sensible size
      cy.on("tap", "node", function (evt) {
        var id = evt.target.id();
        window.location.href = box.dataset.base + "/object/" + encodeURIComponent(id);
      });
      window.inspectorGraph = cy;
      box.dataset.nodes = String(g.nodes.length);
      box.dataset.edges = String(g.edges.length);
      status.textContent = g.nodes.length + " nodes, " + g.edges.length + " edges" + (g.truncated ? " (truncated)" : "");
    })
    .catch(function (e) { status.textContent = "could not load the graph: " + e.message; });
})();
