// Explorable figures (sdpa.figures.explorable): the page holds the numbers as JSON, computed
// while the site builds; this script adds a slider for the head dimension d_k and a choice
// of scale rule, draws the chosen attention row as bars and announces its entropy and the
// spectral norm of its softmax Jacobian to screen readers. No library, no request.
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  var W = 420, H = 200, LEFT = 48, BOTTOM = 30, TOP = 10;

  function make(tag, attrs, parent, ns) {
    var node = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    if (parent) parent.appendChild(node);
    return node;
  }

  function build(figure) {
    if (figure.dataset.ready) return;
    figure.dataset.ready = "1";
    var data = JSON.parse(figure.querySelector("script.sdpa-explorable-data").textContent);
    var body = figure.querySelector(".sdpa-explorable-body");
    var id = figure.id, n = data.n_keys, maxEntropy = Math.log(n);

    var controls = make("div", { class: "sdpa-explorable-controls" }, body);
    var sliderBox = make("div", {}, controls);
    var label = make("label", { for: id + "-dk" }, sliderBox);
    label.textContent = "Head dimension dₖ = ";
    var shown = make("output", { for: id + "-dk" }, label);
    var slider = make("input", {
      type: "range", id: id + "-dk", min: 0, max: data.d_k.length - 1, step: 1,
      value: Math.max(0, data.d_k.indexOf(64)),
    }, sliderBox);
    var rules = make("fieldset", {}, controls);
    make("legend", {}, rules).textContent = "Logits multiplied by";
    data.rules.forEach(function (rule, i) {
      var option = make("label", { class: "sdpa-explorable-rule" }, rules);
      var radio = make("input", { type: "radio", name: id + "-rule", value: rule.key }, option);
      if (i === 1) radio.checked = true;
      option.appendChild(document.createTextNode(" " + rule.label));
    });

    var svg = make("svg", {
      viewBox: "0 0 " + W + " " + H, role: "img", "aria-labelledby": id + "-readout",
      class: "sdpa-explorable-chart",
    }, body, SVG);
    var plotH = H - BOTTOM - TOP, step = (W - LEFT - 6) / n;
    [0, 0.5, 1].forEach(function (tick) {
      var y = TOP + plotH * (1 - tick);
      make("line", { x1: LEFT - 4, x2: W - 4, y1: y, y2: y, class: tick ? "grid" : "axis" }, svg, SVG);
      make("text", { x: LEFT - 8, y: y + 4, "text-anchor": "end" }, svg, SVG).textContent = tick;
    });
    make("text", { x: LEFT + (W - LEFT) / 2, y: H - 6, "text-anchor": "middle" }, svg, SVG)
      .textContent = "keys, sorted by weight";
    make("text", { x: 14, y: TOP + plotH / 2, "text-anchor": "middle",
      transform: "rotate(-90 14 " + (TOP + plotH / 2) + ")" }, svg, SVG).textContent = "weight";
    var bars = [];
    for (var i = 0; i < n; i++) {
      bars.push(make("rect", { x: LEFT + i * step + 1, width: Math.max(1, step - 2), y: TOP + plotH, height: 0 },
        svg, SVG));
    }
    var readout = make("p", { id: id + "-readout", class: "sdpa-explorable-readout", "aria-live": "polite" }, body);

    function draw() {
      var at = Number(slider.value), dk = data.d_k[at];
      var rule = figure.querySelector("input[type=radio]:checked").value;
      var arm = data.arms[rule], label = data.rules.filter(function (r) { return r.key === rule; })[0].label;
      var row = arm.row[at].slice().sort(function (a, b) { return b - a; });
      row.forEach(function (w, j) {
        bars[j].setAttribute("y", TOP + plotH * (1 - w));
        bars[j].setAttribute("height", plotH * w);
      });
      shown.textContent = dk;
      slider.setAttribute("aria-valuetext", "dₖ = " + dk);
      readout.textContent = "dₖ = " + dk + ", logits × " + label + ": largest weight " + row[0].toFixed(2) +
        ", entropy " + arm.entropy[at].toFixed(2) + " nats (uniform row: " + maxEntropy.toFixed(2) +
        "), Jacobian spectral norm " + arm.norm[at].toFixed(3) + " (at most 0.5).";
    }
    slider.addEventListener("input", draw);
    rules.addEventListener("change", draw);
    draw();
  }

  function start() {
    document.querySelectorAll("figure.sdpa-explorable").forEach(build);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
