// The one chart wrapper of the farm's pages: uPlot (served by the farm from node_modules, never a CDN).
//   const c = Farm.chart(box, { title, series: [{ label }], time: true, onClick(i) {} });  c.setData([xs, ys1, …]);
"use strict";
(function () {
  const Farm = (window.Farm = window.Farm || {});
  const COLORS = ["#2f6fca", "#c7433d", "#3c9a5b", "#d18b1f", "#7a4fc2", "#1a9ba1", "#b0458f", "#6b7280", "#8a6d1e", "#2a4d7a"];
  Farm.COLORS = COLORS;

  Farm.chart = function chart(box, o) {
    const el = Farm.el;
    const wrap = el("div", { class: "chart", "data-chart": o.id || o.title });
    const now = el("div", { class: "now", "data-now": "" });
    const plotBox = el("div", {});
    wrap.append(el("h3", {}, o.title), plotBox, now);
    box.append(wrap);
    const width = () => Math.max(280, (o.width || plotBox.clientWidth || 420) - 4);
    const makeOpts = (labels) => ({
      width: width(),
      height: o.height || 180,
      scales: { x: { time: o.time !== false } },
      axes: [{}, { size: 50, values: o.yFormat ? (u, vals) => vals.map(o.yFormat) : undefined }],
      cursor: { drag: { x: false, y: false }, focus: { prox: 30 } },
      focus: { alpha: 0.35 },
      legend: { show: labels.length > 0 && o.legend !== false },
      series: [{ label: o.xLabel || (o.time === false ? "step" : "time") }, ...labels.map((s, i) => ({ label: s.label, stroke: s.color || COLORS[i % COLORS.length], width: 1.5, spanGaps: !!o.spanGaps, points: { show: o.points === false ? false : (u, si, i0, i1) => i1 - i0 < 80 }, paths: o.bars ? window.uPlot.paths.bars({ size: [0.6, 40] }) : undefined, fill: o.bars ? (s.color || COLORS[i % COLORS.length]) + "88" : undefined }))],
      hooks: {
        setSeries: [
          (u, i, so) => {
            if (so && so.focus) focused = i;
          },
        ],
        init: [
          (u) => {
            if (!o.onClick) return;
            u.over.style.cursor = "pointer";
            u.over.addEventListener("click", () => {
              const i = u.cursor.idx;
              if (i === null || i === undefined) return;
              // The series whose point at this x is nearest the pointer (uPlot's focus when it has one).
              let best = focused;
              let dist = Infinity;
              for (let s = 1; s < u.data.length; s++) {
                const v = u.data[s][i];
                if (v === null || v === undefined) continue;
                const d = Math.abs(u.valToPos(v, u.series[s].scale || "y") - u.cursor.top);
                if (d < dist) (dist = d), (best = s);
              }
              o.onClick(i, u.data[0][i], best ? api.labels[best - 1] : null);
            });
          },
        ],
      },
    });
    let plot;
    let focused = null;
    let labelsKey = "";
    const api = {
      el: wrap,
      /** data = [xs, ys1, ys2, …]; series = [{ label }] (a change of labels rebuilds the chart). */
      setData(data, series) {
        const labels = series || o.series || [];
        const key = JSON.stringify(labels.map((s) => s.label));
        if (!plot || key !== labelsKey) {
          if (plot) plot.destroy();
          plotBox.replaceChildren();
          labelsKey = key;
          plot = new window.uPlot(makeOpts(labels), data, plotBox);
        } else {
          plot.setData(data);
        }
        api.data = data;
        api.labels = labels;
        const last = data[0].length - 1;
        wrap.setAttribute("data-points", String(data[0].length));
        now.replaceChildren(
          last < 0
            ? "no data yet"
            : `last (${o.time === false ? `step ${data[0][last]}` : new Date(data[0][last] * 1000).toLocaleTimeString()}): ` +
                labels.map((s, i) => `${s.label} ${data[i + 1][last] === null || data[i + 1][last] === undefined ? "—" : Farm.num(data[i + 1][last], o.digits === undefined ? 3 : o.digits)}`).join(" · ") +
                (o.nowExtra ? ` · ${o.nowExtra(last)}` : ""),
        );
      },
      plot: () => plot,
      destroy() {
        if (plot) plot.destroy();
      },
    };
    return api;
  };
})();
