// Evaluation reports: draws the numbers the page carries (<script type="application/json" id="page-data">),
// computed by SQL over the data set (libs/dataset/src/evaluation.ts). Also the list of campaigns to report on.
"use strict";
(function () {
  const Farm = window.Farm;
  const { el, num, pct, qs } = Farm;
  const data = JSON.parse(document.getElementById("page-data").textContent);
  if (data.offline) Farm.sessionInfo = { login: false, pages: [] };

  function intervalBar(low, high, point, min, max) {
    const span = max - min;
    const at = (v) => `${(100 * (v - min)) / span}%`;
    const bar = el("span", { class: "interval", title: `${pct(low)} – ${pct(high)}` });
    const ci = el("span", { class: "ci" });
    ci.style.left = at(low);
    ci.style.width = `${(100 * (high - low)) / span}%`;
    const pt = el("span", { class: "pt" });
    pt.style.left = at(point);
    bar.append(ci, pt);
    if (min < 0) {
      const z = el("span", { class: "zero" });
      z.style.left = at(0);
      bar.append(z);
    }
    return bar;
  }

  const viewerLink = (campaign, task, text) =>
    data.viewerBase ? el("a", { href: `${data.viewerBase}view/?${qs({ campaign, task })}`, title: "the episodes in the viewer" }, text) : text;

  function rateTable(rows, keys, id) {
    const heads = { campaignId: "campaign", policy: "policy", taskId: "task", goal: "goal" };
    const head = el(
      "tr",
      {},
      ...keys.map((k) => el("th", {}, heads[k])),
      ...["episodes", "successes", "success rate", "95 % interval", "", "steps / episode", "s / episode", "invalid / step", "tokens / step (in + out)", "model ms / step"].map((h) => el("th", {}, h)),
    );
    const body = rows.map((r) =>
      el(
        "tr",
        { "data-campaign": r.campaignId, "data-task": r.taskId, "data-goal": r.goal === undefined ? undefined : r.goal || "", "data-episodes": r.episodes, "data-successes": r.successes, "data-rate": r.rate, "data-low": r.low, "data-high": r.high },
        ...keys.map((k) => el("td", {}, k === "taskId" || k === "campaignId" ? viewerLink(r.campaignId, k === "taskId" ? r.taskId : undefined, r[k]) : r[k] === null ? "—" : String(r[k]))),
        el("td", { class: "num" }, r.episodes),
        el("td", { class: "num" }, r.successes),
        el("td", { class: "num" }, pct(r.rate)),
        el("td", { class: "num" }, `${pct(r.low)} – ${pct(r.high)}`),
        el("td", {}, intervalBar(r.low, r.high, r.rate, 0, 1)),
        el("td", { class: "num" }, num(r.stepsPerEpisode, 1)),
        el("td", { class: "num" }, num(r.secondsPerEpisode, 2)),
        el("td", { class: "num" }, num(r.invalidPerStep, 3)),
        el("td", { class: "num" }, r.promptTokensPerStep === null && r.completionTokensPerStep === null ? "—" : `${num(r.promptTokensPerStep, 0)} + ${num(r.completionTokensPerStep, 0)}`),
        el("td", { class: "num" }, num(r.latencyMsPerStep, 1)),
      ),
    );
    return el("table", { class: "rates", id }, el("thead", {}, head), el("tbody", {}, ...body));
  }

  function outcomes(rows) {
    return el(
      "table",
      { class: "outcomes" },
      el("thead", {}, el("tr", {}, ...["campaign", "outcome", "cause", "episodes"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows.map((r) => el("tr", { "data-campaign": r.campaignId, "data-cause": r.cause }, el("td", {}, r.campaignId), el("td", {}, r.outcome), el("td", {}, r.cause), el("td", { class: "num" }, r.episodes)))),
    );
  }

  const ev2 = (name) => (data.evaluation.other && name === "base" ? "First: " : "Episodes of ");
  function side(s, name) {
    return el(
      "section",
      { "data-side": name },
      el("h2", {}, `${name === "other" ? "Second: " : ev2(name)}${s.label}`),
      el("h3", {}, "Per campaign"),
      rateTable(s.campaigns, ["campaignId", "policy"], `${name}-campaigns`),
      el("h3", {}, "Per task (a family's instances share its task id)"),
      rateTable(s.byTask, ["campaignId", "taskId"], `${name}-tasks`),
      el("details", {}, el("summary", {}, `Per goal (${s.byGoal.length})`), rateTable(s.byGoal, ["campaignId", "taskId", "goal"], `${name}-goals`)),
      el("h3", {}, "Outcomes and end causes"),
      outcomes(s.outcomes),
      el(
        "details",
        { class: "sql" },
        el("summary", {}, "The queries (run them yourself: npx farm trajectories query \"<sql>\" DATASET)"),
        ...Object.entries(s.sql).map(([k, q]) => el("div", {}, el("h3", {}, k), el("pre", { class: "text", "data-sql": k }, q))),
      ),
    );
  }

  function compare(ev) {
    const diffs = ev.differences || [];
    const differ = diffs.filter((d) => d.differs);
    const head = el("tr", {}, ...["task", ev.base.label, ev.other.label, "difference", "95 % interval", ""].map((h) => el("th", {}, h)));
    const body = diffs.map((d) =>
      el(
        "tr",
        { "data-task": d.taskId, "data-diff": d.diff, "data-low": d.low, "data-high": d.high, "data-differs": String(d.differs), class: d.differs ? "differs" : undefined },
        el("td", {}, d.taskId),
        el("td", { class: "num" }, `${pct(d.base.rate)} (${d.base.successes}/${d.base.episodes})`),
        el("td", { class: "num" }, `${pct(d.other.rate)} (${d.other.successes}/${d.other.episodes})`),
        el("td", { class: "num" }, `${d.diff >= 0 ? "+" : ""}${pct(d.diff)}`),
        el("td", { class: "num" }, `${pct(d.low)} – ${pct(d.high)}`),
        el("td", {}, intervalBar(d.low, d.high, d.diff, -1, 1)),
      ),
    );
    return el(
      "section",
      { id: "compare" },
      el("h2", {}, "Difference per task (second − first)"),
      el("p", { id: "differ-list" }, differ.length ? `Differ beyond noise (the 95 % interval excludes 0): ${differ.map((d) => d.taskId).join(", ")}` : "No task differs beyond noise (every 95 % interval includes 0)."),
      el("table", { class: "differences" }, el("thead", {}, head), el("tbody", {}, ...body)),
      el("p", { class: "muted" }, "Interval of a difference: Newcombe's hybrid score interval from the two Wilson intervals."),
    );
  }

  async function reportPage() {
    await Farm.header("reports");
    const ev = data.evaluation;
    const parts = [
      el("h2", {}, ev.title),
      el(
        "p",
        { class: "muted", id: "rule" },
        `${ev.base.successRule}. Intervals: Wilson 95 % score intervals (z = ${ev.z}). Generated ${ev.generatedAt}.`,
        data.viewerBase ? ` Rows link to the episode viewer${data.viewerHint ? ` (${data.viewerHint})` : ""}.` : "",
      ),
    ];
    if (ev.other) parts.push(compare(ev));
    parts.push(side(ev.base, "base"));
    if (ev.other) parts.push(side(ev.other, "other"));
    document.getElementById("content").replaceChildren(...parts);
    Farm.status("");
  }

  async function indexPage() {
    await Farm.header("reports");
    const rows = data.campaigns.map((c) =>
      el(
        "tr",
        { "data-campaign": c.id },
        el("td", {}, el("a", { href: `/report?${qs({ campaign: c.id })}` }, c.id)),
        el("td", {}, c.tasks.join(", ")),
        el("td", {}, c.policy),
        el("td", { class: "num" }, c.episodes),
        el("td", {}, Farm.time(c.endedAt)),
      ),
    );
    const opts = () => data.campaigns.map((c) => el("option", { value: c.id }, c.id));
    const form = el(
      "form",
      { class: "filters", method: "get", action: "/report" },
      el("label", {}, "campaign", el("select", { name: "campaign" }, ...opts())),
      el("label", {}, "compare with", el("select", { name: "compare" }, el("option", { value: "" }, "—"), ...opts())),
      el("button", { type: "submit" }, "report"),
    );
    document.getElementById("content").replaceChildren(
      el("h2", {}, "Reports"),
      el("p", { class: "muted" }, `campaigns with episodes in ${data.source}`),
      form,
      el("table", {}, el("thead", {}, el("tr", {}, ...["campaign", "tasks", "policy", "episodes", "last ended"].map((h) => el("th", {}, h)))), el("tbody", {}, ...rows)),
    );
    Farm.status("");
  }

  (document.body.dataset.page === "report-index" ? indexPage : reportPage)().catch((e) => {
    document.getElementById("content").append(el("p", { class: "error" }, e.message));
  });
})();
