// The episode viewer: a list of episodes (/view/) and one episode's page (/view/episode?id=…#step=N) with the
// step player. Screens are fetched one at a time (/api/episodes/:id/screens/:n/image and …/elements).
"use strict";
(function () {
  const { el, getJson, num, pct, time, query, qs } = window.Farm;
  const enc = encodeURIComponent;

  // ------------------------------------------------------------------ list
  async function listPage() {
    await window.Farm.header("episodes");
    const q = query();
    const box = document.getElementById("content");
    const field = (name, title, type) => el("label", {}, title, el("input", { name, type: type || "text", value: q[name] || "" }));
    const form = el("form", { class: "filters", method: "get" }, field("campaign", "campaign"), field("task", "task"), field("limit", "at most", "number"), el("button", { type: "submit" }, "show"));
    const when = q.from ? el("p", { class: "muted" }, `episodes that ended ${time(Number(q.from))} – ${q.to ? time(Number(q.to)) : "now"}`) : null;
    box.replaceChildren(form, when || "", el("p", { class: "muted" }, "loading…"));
    const data = await getJson(`/api/episodes?${qs({ campaign: q.campaign, task: q.task, from: q.from, to: q.to, limit: q.limit })}`);
    const head = el("tr", {}, ...["episode", "campaign", "task", "policy", "goal", "outcome · cause", "reward", "success", "steps", "invalid", "ended"].map((h) => el("th", {}, h)));
    const rows = data.episodes.map((e) =>
      el(
        "tr",
        { "data-episode": e.id },
        el("td", {}, el("a", { href: `/view/episode?${qs({ id: e.id })}` }, e.id)),
        el("td", {}, e.campaignId),
        el("td", {}, e.taskId),
        el("td", {}, e.policy),
        el("td", {}, e.goal || "—"),
        el("td", {}, `${e.outcome} · ${e.cause}`),
        el("td", { class: "num" }, num(e.reward, 3)),
        el("td", {}, el("span", { class: `badge ${e.succeeded ? "ok" : "bad"}` }, e.success !== null ? `${num(e.success, 2)}` : e.succeeded ? "yes" : "no")),
        el("td", { class: "num" }, e.steps),
        el("td", { class: "num" }, e.invalidActions),
        el("td", {}, time(e.endedAt)),
      ),
    );
    box.replaceChildren(
      form,
      when || "",
      el("p", { class: "muted", id: "count" }, `${data.episodes.length} of ${data.total} episode(s) from ${data.source}`),
      el("table", { class: "episodes" }, el("thead", {}, head), el("tbody", {}, ...rows)),
    );
    window.Farm.status(`loaded ${new Date().toLocaleTimeString()}`);
  }

  // ------------------------------------------------------------------ one episode
  const cache = new Map();
  function cached(key, load) {
    if (!cache.has(key)) {
      cache.set(key, load());
      if (cache.size > 12) cache.delete(cache.keys().next().value);
    }
    return cache.get(key);
  }
  const loadImage = (src) =>
    new Promise((resolve) => {
      const img = new Image();
      img.onload = () => resolve(img);
      img.onerror = () => resolve(null);
      img.src = src;
    });

  function kv(rows) {
    return el("table", { class: "kv" }, el("tbody", {}, ...rows.filter(Boolean).map(([k, v, attrs]) => el("tr", attrs || {}, el("th", {}, k), el("td", {}, v)))));
  }

  async function episodePage() {
    await window.Farm.header("episodes");
    const id = query().id;
    const box = document.getElementById("content");
    if (!id) {
      box.replaceChildren(el("p", { class: "error" }, "no episode id: open an episode from the list"));
      return;
    }
    const ep = await getJson(`/api/episodes/${enc(id)}`);
    document.title = `episode ${ep.id}`;
    const M = ep.stepViews.length;
    const base = `/api/episodes/${enc(ep.id)}/screens`;

    const checks = ep.checks
      ? el(
          "table",
          { class: "checks" },
          el("thead", {}, el("tr", {}, ...["check", "kind", "passed", "observed", "expected", "error"].map((h) => el("th", {}, h)))),
          el(
            "tbody",
            {},
            ...ep.checks.map((c) =>
              el("tr", { "data-check": c.name }, el("td", {}, c.name), el("td", {}, c.kind), el("td", {}, el("span", { class: `badge ${c.passed ? "ok" : "bad"}` }, c.passed ? "yes" : "no")), el("td", {}, c.observed), el("td", {}, c.expected), el("td", { class: "error" }, c.error || "")),
            ),
          ),
        )
      : el("p", { class: "muted" }, "no checks recorded (the task has no declared checks, or the trajectory predates them)");
    const summary = kv([
      ["goal", ep.goal || "—", { "data-field": "goal" }],
      ["outcome", `${ep.outcome} · ${ep.cause}${ep.causeDetail ? ` (${ep.causeDetail})` : ""}`, { "data-field": "outcome" }],
      ["total reward", el("span", { id: "total-reward", "data-reward": String(ep.reward) }, num(ep.reward, 4))],
      [
        "success",
        el("span", { class: `badge ${ep.succeeded ? "ok" : "bad"}`, id: "success", "data-success": ep.success === null ? "" : String(ep.success) }, ep.success !== null ? `score ${num(ep.success, 3)}` : ep.succeeded ? "yes (reward > 0)" : "no (reward ≤ 0; no score recorded)"),
      ],
      ep.scoreError ? ["score error", el("span", { class: "error" }, ep.scoreError)] : null,
      ep.params ? ["params", el("code", {}, JSON.stringify(ep.params))] : null,
      ep.agentStatus ? ["agent status", ep.agentStatus] : null,
      ep.answer ? ["answer", ep.answer] : null,
      ["campaign · task · policy", `${ep.campaignId} · ${ep.taskId} · ${ep.policy}`],
      ["steps · invalid", `${M} · ${ep.invalidActions}`],
      ["device · worker", `${ep.device} · ${ep.worker}`],
      ["started · ended", `${time(ep.startedAt)} · ${time(ep.endedAt)}`],
    ]);

    const canvas = el("canvas", { id: "screen", width: 270, height: 480 });
    const screenBox = el("div", { class: "screen-box" }, canvas);
    const counter = el("span", { id: "step-counter" }, "");
    const prev = el("button", { type: "button", id: "prev", title: "previous step (←)" }, "◀ prev");
    const next = el("button", { type: "button", id: "next", title: "next step (→)" }, "next ▶");
    const toggle = el("input", { type: "checkbox", id: "show-elements" });
    const controls = el("div", { class: "controls" }, prev, counter, next, el("label", {}, toggle, " element boxes (", el("kbd", {}, "e"), ")"), el("span", { class: "muted" }, " ", el("kbd", {}, "←"), " ", el("kbd", {}, "→"), " ", el("kbd", {}, "Home"), " ", el("kbd", {}, "End")));
    const strip = el(
      "div",
      { class: "steps-strip", id: "steps-strip" },
      ...ep.stepViews.map((s) => el("a", { href: `#step=${s.index}`, "data-step": s.index, class: [s.invalid ? "invalid" : "", s.reward !== 0 ? "rewarded" : ""].join(" ").trim() || undefined, title: s.invalid ? `invalid: ${s.invalid}` : `reward ${s.reward}` }, s.index)),
      el("a", { href: `#step=${M + 1}`, "data-step": M + 1, title: "the final screen" }, "end"),
    );
    const panel = el("div", { id: "step-panel" });
    const elementsBox = el("div", { id: "elements" });
    const charts = el("div", { class: "charts", id: "step-charts" });
    box.replaceChildren(
      el("h2", {}, `Episode ${ep.id}`),
      summary,
      el("h2", {}, "Checks"),
      checks,
      el("h2", {}, "Steps"),
      strip,
      controls,
      el("div", { class: "player" }, el("div", {}, screenBox), el("div", {}, panel)),
      el("h2", {}, "Reward and extras per step"),
      charts,
      el("h2", {}, "Elements of this screen ", el("span", { class: "muted" }, "(the list the action was chosen on)")),
      elementsBox,
    );

    // Reward per step and its running total; numeric scalar extras beside it. A click opens that step.
    if (M > 0) {
      const xs = ep.stepViews.map((s) => s.index);
      let run = 0;
      const rewards = ep.stepViews.map((s) => s.reward);
      const totals = rewards.map((r) => (run += r));
      const rc = window.Farm.chart(charts, { id: "rewards", title: "reward", time: false, series: [{ label: "step reward" }, { label: "total" }], onClick: (i) => go(xs[i]) });
      rc.setData([xs, rewards, totals]);
      const names = [];
      for (const s of ep.stepViews) for (const x of s.extras) if (typeof x.value === "number" || (Array.isArray(x.value) && typeof x.value[0] === "number")) if (!names.includes(x.name) && names.length < 4) names.push(x.name);
      if (names.length) {
        const val = (s, n) => {
          const x = s.extras.find((e) => e.name === n);
          if (!x) return null;
          return Array.isArray(x.value) ? (typeof x.value[0] === "number" ? x.value[x.value.length - 1] : null) : x.value;
        };
        const xc = window.Farm.chart(charts, { id: "extras", title: "extras", time: false, series: names.map((n) => ({ label: n })), onClick: (i) => go(xs[i]) });
        xc.setData([xs, ...names.map((n) => ep.stepViews.map((s) => val(s, n)))]);
      }
    }

    let current = 0;
    let token = 0;
    const cumulative = [];
    {
      let t = 0;
      for (const s of ep.stepViews) cumulative.push((t += s.reward));
    }
    async function show(n) {
      n = Math.max(1, Math.min(M + 1, n | 0 || 1));
      current = n;
      const my = ++token;
      const screenIdx = n - 1;
      const step = n <= M ? ep.stepViews[n - 1] : null;
      const avail = ep.screens[screenIdx] || { frame: false, elements: false };
      counter.textContent = n <= M ? `step ${n} of ${M}` : `final screen (after step ${M})`;
      prev.disabled = n <= 1;
      next.disabled = n >= M + 1;
      for (const a of strip.querySelectorAll("a")) a.classList.toggle("current", Number(a.dataset.step) === n);
      if (location.hash !== `#step=${n}`) history.replaceState(null, "", `#step=${n}`);
      const [img, els] = await Promise.all([
        avail.frame ? cached(`i${screenIdx}`, () => loadImage(`${base}/${screenIdx}/image`)) : null,
        avail.elements ? cached(`e${screenIdx}`, () => getJson(`${base}/${screenIdx}/elements`)) : null,
      ]);
      if (my !== token) return; // a newer step was asked for meanwhile
      const elements = els ? els.elements : [];
      const drawn = window.Farm.drawScreen(canvas, { image: img, screen: els && els.screen, elements, showElements: toggle.checked, step });
      canvas.dataset.step = String(n);
      canvas.dataset.screen = String(screenIdx);
      canvas.dataset.tap = drawn.tap ? `${drawn.tap.x},${drawn.tap.y}` : "";
      canvas.dataset.canvasTap = drawn.canvasTap ? `${drawn.canvasTap.x},${drawn.canvasTap.y}` : "";
      canvas.dataset.box = drawn.box ? drawn.box.join(",") : "";
      canvas.dataset.element = drawn.element === null ? "" : String(drawn.element);
      canvas.dataset.ready = String(n);
      // The step's panel: action parsed and as given, what it did, reward, extras.
      panel.replaceChildren(
        step
          ? kv([
              ["step", `${n} of ${M} · ${num(step.timeOffsetMs / 1000, 2)} s after the reset`],
              ["reward", el("span", { id: "step-reward", "data-reward": String(step.reward) }, num(step.reward, 4)), {}],
              ["total so far", el("span", { id: "running-reward", "data-reward": String(cumulative[n - 1]) }, num(cumulative[n - 1], 4))],
              step.invalid ? ["invalid", el("span", { class: "badge bad", id: "invalid" }, step.invalid)] : null,
              ["action", el("code", { id: "action" }, step.action || "—")],
              step.resolved ? ["did", el("code", { id: "resolved" }, JSON.stringify(step.resolved))] : null,
              step.touch ? ["touch", `${step.touch.type} at (${num(step.touch.x, 3)}, ${num(step.touch.y, 3)})`] : null,
              ["policy's text", step.given ? el("pre", { class: "text", id: "given" }, step.given) : el("span", { class: "muted" }, "— (not recorded separately: the action above is what it answered)")],
              step.extras.length ? ["extras", el("pre", { class: "text" }, step.extras.map((x) => `${x.name} = ${JSON.stringify(x.value)}`).join("\n"))] : null,
            ])
          : kv([["final screen", `after step ${M}; total reward ${num(ep.reward, 4)}`]]),
      );
      if (!els) {
        elementsBox.replaceChildren(el("p", { class: "muted" }, "no element list recorded for this screen (run with --observe a11y)"));
      } else {
        const head = el("tr", {}, ...["#", "class", "text", "description", "resource id", "bounds", "flags"].map((h) => el("th", {}, h)));
        const flags = (e) => ["clickable", "editable", "scrollable", "checkable", "checked", "focused", "selected"].filter((f) => e[`is_${f}`]).join(" ");
        elementsBox.replaceChildren(
          el(
            "table",
            { class: "elements" },
            el("thead", {}, head),
            el(
              "tbody",
              {},
              ...elements.map((e) =>
                el(
                  "tr",
                  { "data-index": e.index, "data-bounds": (e.bounds || []).join(","), class: drawn.element === e.index ? "named" : undefined },
                  el("td", { class: "num" }, e.index),
                  el("td", {}, String(e.class_name || "").replace(/^android\.widget\./, "")),
                  el("td", {}, e.text || ""),
                  el("td", {}, e.content_description || ""),
                  el("td", {}, e.resource_id || ""),
                  el("td", {}, `[${(e.bounds || []).join(", ")}]`),
                  el("td", { class: "muted" }, flags(e)),
                ),
              ),
            ),
          ),
        );
      }
      // Warm the next screen.
      const nx = screenIdx + 1;
      if (ep.screens[nx] && ep.screens[nx].frame) cached(`i${nx}`, () => loadImage(`${base}/${nx}/image`));
    }
    function go(n) {
      void show(n).catch((e) => window.Farm.status(`failed: ${e.message}`));
    }
    prev.addEventListener("click", () => go(current - 1));
    next.addEventListener("click", () => go(current + 1));
    toggle.addEventListener("change", () => go(current));
    window.addEventListener("hashchange", () => {
      const m = /^#step=(\d+)$/.exec(location.hash);
      if (m && Number(m[1]) !== current) go(Number(m[1]));
    });
    document.addEventListener("keydown", (ev) => {
      if (ev.target && /^(INPUT|TEXTAREA|SELECT)$/.test(ev.target.tagName) && ev.target.type !== "checkbox") return;
      if (ev.key === "ArrowRight" || ev.key === "j") go(current + 1);
      else if (ev.key === "ArrowLeft" || ev.key === "k") go(current - 1);
      else if (ev.key === "Home") go(1);
      else if (ev.key === "End") go(M + 1);
      else if (ev.key === "e") {
        toggle.checked = !toggle.checked;
        go(current);
      } else return;
      ev.preventDefault();
    });
    const m = /^#step=(\d+)$/.exec(location.hash);
    await show(m ? Number(m[1]) : 1);
    window.Farm.status(`${M} steps`);
  }

  const page = document.body.dataset.page;
  const run = page === "episode" ? episodePage : listPage;
  run().catch((e) => {
    window.Farm.status(`failed: ${e.message}`);
    document.getElementById("content").append(el("p", { class: "error", id: "load-error" }, e.message));
  });
})();
