// The fleet page's charts (last hour, from GET /fleet/series, refreshed every 5 s): episodes/s, steps/s, start
// latency and failures, per campaign and per host. A click on a point opens the episodes that ended in that
// minute in the viewer (of that campaign, when a campaign's line is the one under the pointer).
"use strict";
(function () {
  const Farm = window.Farm;
  const POLL_MS = 5000;
  const box = document.getElementById("charts");
  if (!box) return;
  const charts = {};
  let latest = null;

  function openMinute(ts, label, byCampaign) {
    const from = Math.floor((ts * 1000) / 60000) * 60000;
    const q = { from, to: from + 60000, campaign: byCampaign && label ? label.label : undefined };
    window.open(`/view/?${Farm.qs(q)}`, "_blank", "noopener");
  }

  function chart(id, title, byCampaign, extra, spanGaps) {
    if (!charts[id]) {
      charts[id] = Farm.chart(box, {
        id,
        title,
        time: true,
        onClick: (i, ts, label) => openMinute(ts, label, byCampaign),
        nowExtra: extra,
        spanGaps,
      });
      charts[id].el.setAttribute("data-by", byCampaign ? "campaign" : "host");
    }
    return charts[id];
  }

  function draw(s) {
    latest = s;
    window.FarmFleetSeries = s; // the last answer and the charts, for the tests and the console
    window.FarmCharts = charts;
    const xs = s.t.map((t) => t / 1000);
    const camp = Object.keys(s.campaigns);
    const hosts = Object.keys(s.hosts);
    const put = (id, title, byCampaign, keys, pick, extra, spanGaps) => {
      const c = chart(id, title, byCampaign, extra, spanGaps);
      c.setData([xs, ...keys.map(pick)], keys.map((k) => ({ label: k })));
    };
    put("campaign-episodes", "episodes/s per campaign", true, camp, (k) => s.campaigns[k].episodesPerSec, (i) => `finished ${Object.keys(latest.campaigns).map((k) => `${k} ${latest.campaigns[k].finished[i]}`).join(", ")}`);
    put("host-episodes", "episodes/s per host", false, hosts, (k) => s.hosts[k].episodesPerSec, (i) => `done ${Object.keys(latest.hosts).map((k) => `${k} ${latest.hosts[k].episodesDone[i]}`).join(", ")}`);
    put("campaign-steps", "steps/s per campaign", true, camp, (k) => s.campaigns[k].stepsPerSec);
    put("host-steps", "steps/s per host", false, hosts, (k) => s.hosts[k].stepsPerSec);
    put("campaign-latency", "start latency (s) per campaign", true, camp, (k) => s.campaigns[k].startLatencySec, undefined, true);
    put("campaign-failures", "failed episodes per sample, per campaign", true, camp, (k) => s.campaigns[k].failures, (i) => `failed ${Object.keys(latest.campaigns).map((k) => `${k} ${latest.campaigns[k].failed[i]}`).join(", ")}`);
    put("host-errors", "device errors per sample, per host", false, hosts, (k) => s.hosts[k].deviceErrors);
    box.setAttribute("data-points", String(s.t.length));
    box.setAttribute("data-last-t", String(s.t[s.t.length - 1] || ""));
  }

  async function refresh() {
    try {
      draw(await Farm.getJson("/fleet/series"));
    } catch (e) {
      Farm.status(`charts: ${e.message}`);
    } finally {
      setTimeout(refresh, POLL_MS);
    }
  }
  window.addEventListener("resize", () => {
    for (const c of Object.values(charts)) c.destroy();
    for (const k of Object.keys(charts)) delete charts[k];
    box.replaceChildren();
    if (latest) draw(latest);
  });
  refresh();
})();
