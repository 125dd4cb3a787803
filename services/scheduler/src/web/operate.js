// The operator page (/operate): the episodes waiting for an operator, and one episode driven (or watched) live.
// Frames arrive as Server-Sent Events (JPEG, pushed when the screen changed); a click on the screen becomes a tap
// (or `click` on the element under the pointer when the boxes are on), a drag a swipe, a held press a long press;
// the text box sends input_text or an answer; buttons send Back, Home, Enter, scroll, Done and Infeasible. Each
// action is AndroidWorld's JSON action for the step shown; the scheduler relays it to the device's worker.
"use strict";
(function () {
  const Farm = window.Farm;
  const el = Farm.el;
  const LONG_PRESS_MS = 600;
  /** What tests and the teleop bench read: the state, frame paint times and action → frame times. */
  const stats = (window.__operate = { mode: undefined, view: undefined, frames: 0, seq: 0, paints: [], actions: [], ended: undefined, errors: [] });

  async function post(path, body) {
    const r = await fetch(path, { method: "POST", credentials: "same-origin", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(body || {}) });
    let j = {};
    try {
      j = await r.json();
    } catch (_) {
      // not JSON
    }
    if (!r.ok) throw Object.assign(new Error((j.error && j.error.message) || `HTTP ${r.status}`), { status: r.status, code: j.error && j.error.code });
    return j;
  }

  function say(text, bad) {
    const s = document.getElementById("op-status");
    if (!s) return;
    s.textContent = text;
    s.className = bad ? "bad" : "muted";
    if (bad) stats.errors.push(text);
  }

  // ---- the list ----
  async function listPage() {
    const main = document.getElementById("content");
    const body = el("tbody");
    main.replaceChildren(el("h2", {}, "Episodes waiting for an operator"), el("p", { id: "op-status", class: "muted" }, ""), el("table", { id: "waiting" }, el("thead", {}, el("tr", {}, el("th", {}, "goal"), el("th", {}, "task"), el("th", {}, "episode"), el("th", {}, "step"), el("th", {}, "operator"), el("th", {}, ""))), body));
    async function refresh() {
      let j;
      try {
        j = await Farm.getJson("/api/operator/episodes");
      } catch (e) {
        say(String(e.message || e), true);
        return;
      }
      Farm.status(`you are ${j.operator} · ${j.episodes.length} waiting · ${new Date().toLocaleTimeString()}`);
      body.replaceChildren(
        ...j.episodes.map((e) =>
          el(
            "tr",
            { "data-episode": e.episodeId, "data-leased": e.leasedBy ? "1" : "0" },
            el("td", {}, e.goal),
            el("td", {}, e.taskId),
            el("td", {}, e.episodeId),
            el("td", { class: "num" }, e.step),
            el("td", {}, e.leasedBy ? (e.mine ? "you" : e.leasedBy) : "—"),
            el(
              "td",
              {},
              el("button", { "data-take": e.episodeId, disabled: e.leasedBy && !e.mine ? true : undefined, onclick: () => take(e.episodeId) }, e.mine ? "Resume" : "Take"),
              " ",
              el("button", { "data-watch": e.episodeId, onclick: () => (location.href = `/operate?episode=${encodeURIComponent(e.episodeId)}`) }, "Watch"),
            ),
          ),
        ),
      );
      if (!j.episodes.length) body.append(el("tr", {}, el("td", { colspan: 6, class: "muted" }, "none: submit a campaign with --policy human")));
    }
    async function take(id) {
      try {
        await post(`/api/operator/episodes/${encodeURIComponent(id)}/lease`);
        location.href = `/operate?episode=${encodeURIComponent(id)}`;
      } catch (e) {
        say(`cannot take ${id}: ${e.message}`, true);
        refresh();
      }
    }
    await refresh();
    setInterval(refresh, 2000);
  }

  // ---- one episode ----
  function episodePage(id) {
    const main = document.getElementById("content");
    const canvas = el("canvas", { id: "screen", width: 360, height: 640, tabindex: 0 });
    const text = el("input", { id: "op-text", type: "text", placeholder: "text to type, or the answer", size: 34 });
    const instruction = el("input", { id: "op-instruction", type: "text", placeholder: "step instruction (optional)", size: 34 });
    const boxes = el("input", { id: "op-boxes", type: "checkbox" });
    const btn = (id, label, action) => el("button", { id, type: "button", onclick: () => send(typeof action === "function" ? action() : action) }, label);
    main.replaceChildren(
      el(
        "div",
        { class: "player operate" },
        el("div", { class: "screen-box" }, canvas),
        el(
          "div",
          {},
          el("h2", { id: "op-goal" }, "…"),
          el("p", {}, el("span", { id: "op-mode", class: "badge" }, "connecting"), " ", el("span", { id: "op-step" }, ""), " ", el("span", { id: "op-limits", class: "muted" }, "")),
          el("p", { id: "op-status", class: "muted" }, ""),
          el("div", { class: "controls" }, btn("op-back", "Back", { action_type: "navigate_back" }), btn("op-home", "Home", { action_type: "navigate_home" }), btn("op-enter", "Enter", { action_type: "keyboard_enter" })),
          el("div", { class: "controls" }, "scroll ", btn("op-scroll-up", "↑", { action_type: "scroll", direction: "up" }), btn("op-scroll-down", "↓", { action_type: "scroll", direction: "down" }), btn("op-scroll-left", "←", { action_type: "scroll", direction: "left" }), btn("op-scroll-right", "→", { action_type: "scroll", direction: "right" })),
          el("div", { class: "controls" }, text, btn("op-type", "Type", () => ({ action_type: "input_text", text: text.value })), btn("op-answer", "Answer…", () => ({ action_type: "answer", text: text.value }))),
          el("div", { class: "controls" }, instruction),
          el("div", { class: "controls" }, el("label", {}, boxes, " element boxes (clicks name the element)")),
          el("div", { class: "controls" }, btn("op-done", "Done", { action_type: "status", goal_status: "complete" }), btn("op-infeasible", "Infeasible", { action_type: "status", goal_status: "infeasible" }), el("button", { id: "op-leave", type: "button", onclick: leave }, "Leave (abandon)"), el("a", { href: "/operate" }, "all episodes")),
        ),
      ),
    );
    const ctx = canvas.getContext("2d");
    let img; // the last frame drawn
    let pendingStep = -1;

    function draw() {
      if (img) ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      const v = stats.view;
      if (boxes.checked && v && v.elements) {
        const sx = canvas.width / v.screen.width;
        const sy = canvas.height / v.screen.height;
        ctx.strokeStyle = Farm.SCREEN_COLORS ? Farm.SCREEN_COLORS.elements : "#00c8ff";
        ctx.lineWidth = 2;
        for (const e of v.elements) ctx.strokeRect(e.bounds[0] * sx, e.bounds[1] * sy, (e.bounds[2] - e.bounds[0]) * sx, (e.bounds[3] - e.bounds[1]) * sy);
      }
    }
    boxes.addEventListener("change", draw);

    function showView(v) {
      stats.view = v;
      document.getElementById("op-goal").textContent = v.goal || "(no goal)";
      document.getElementById("op-step").textContent = `step ${v.step}`;
      document.getElementById("op-limits").textContent = [v.maxSteps ? `at most ${v.maxSteps} steps` : "", v.maxSec ? `${v.maxSec} s` : ""].filter(Boolean).join(" · ");
      document.body.dataset.step = String(v.step);
      if (v.previous && v.previous.invalid) say(`the last action was invalid: ${v.previous.invalid}`, true);
      draw();
    }

    async function showFrame(f) {
      const i = new Image();
      i.src = `data:${f.mime};base64,${f.data}`;
      try {
        await i.decode();
      } catch (_) {
        return;
      }
      if (f.seq < stats.seq) return; // an older frame decoded late
      if (canvas.width !== f.width || canvas.height !== f.height) {
        canvas.width = f.width;
        canvas.height = f.height;
      }
      img = i;
      draw();
      requestAnimationFrame(() => {
        const now = Date.now();
        stats.frames++;
        stats.seq = f.seq;
        document.body.dataset.frames = String(stats.frames);
        if (!f.replay && stats.paints.length < 5000) stats.paints.push({ seq: f.seq, at: f.at, painted: now });
        for (const a of stats.actions) if (a.firstFrameAt === undefined && f.at >= a.sentAt) a.firstFrameAt = now;
      });
    }

    const es = new EventSource(`/api/operator/episodes/${encodeURIComponent(id)}/events`);
    es.addEventListener("hello", (m) => {
      const h = JSON.parse(m.data);
      stats.mode = h.mode;
      document.body.dataset.mode = h.mode;
      const b = document.getElementById("op-mode");
      b.textContent = h.mode === "drive" ? `driving as ${h.operator}` : `watching (read-only)${h.holder ? `; ${h.holder} drives` : ""}`;
      b.className = h.mode === "drive" ? "badge ok" : "badge";
    });
    es.addEventListener("view", (m) => showView(JSON.parse(m.data)));
    es.addEventListener("frame", (m) => showFrame(JSON.parse(m.data)));
    es.addEventListener("end", (m) => {
      const e = JSON.parse(m.data);
      stats.ended = e;
      document.body.dataset.ended = e.cause;
      say(`the episode ended: ${e.outcome} (${e.cause}) after ${e.steps} steps`);
      es.close();
    });
    es.onerror = () => {
      if (!stats.ended) say("the stream was interrupted; reconnecting…");
    };

    async function send(action) {
      const v = stats.view;
      if (!v) return say("no screen yet", true);
      if (pendingStep === v.step) return say("waiting for the device…");
      const body = { action, step: v.step };
      if (instruction.value.trim()) body.instruction = instruction.value.trim();
      pendingStep = v.step;
      const record = { type: action.action_type, sentAt: Date.now(), firstFrameAt: undefined };
      if (stats.actions.length < 5000) stats.actions.push(record); // before the POST: its effect may paint first
      try {
        await post(`/api/operator/episodes/${encodeURIComponent(id)}/actions`, body);
        instruction.value = "";
        say(`sent ${action.action_type}`);
      } catch (e) {
        pendingStep = -1;
        const i = stats.actions.indexOf(record);
        if (i >= 0) stats.actions.splice(i, 1);
        say(`input refused: ${e.message}`, true);
      }
    }

    async function leave() {
      try {
        await post(`/api/operator/episodes/${encodeURIComponent(id)}/release`);
        say("you left the episode");
      } catch (e) {
        say(`cannot leave: ${e.message}`, true);
      }
    }

    // Pointer → tap, long press or swipe, in device pixels of the view's screen.
    let down;
    const devicePoint = (ev) => {
      const v = stats.view;
      const r = canvas.getBoundingClientRect();
      const w = v ? v.screen.width : canvas.width;
      const h = v ? v.screen.height : canvas.height;
      return { x: Math.max(0, Math.min(w - 1, Math.round(((ev.clientX - r.left) / r.width) * w))), y: Math.max(0, Math.min(h - 1, Math.round(((ev.clientY - r.top) / r.height) * h))), w, h };
    };
    canvas.addEventListener("pointerdown", (ev) => {
      down = { ...devicePoint(ev), t: performance.now() };
      canvas.setPointerCapture(ev.pointerId);
    });
    canvas.addEventListener("pointerup", (ev) => {
      if (!down) return;
      const p = devicePoint(ev);
      const d = down;
      down = undefined;
      const dx = p.x - d.x;
      const dy = p.y - d.y;
      if (Math.hypot(dx, dy) > 0.05 * Math.min(p.w, p.h)) {
        send({ action_type: "swipe", direction: Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? "right" : "left") : dy > 0 ? "down" : "up" });
        return;
      }
      const type = performance.now() - d.t >= LONG_PRESS_MS ? "long_press" : "click";
      const e = boxes.checked ? elementAt(d.x, d.y) : undefined;
      send(e ? { action_type: type, index: e.index } : { action_type: type, x: d.x, y: d.y });
    });

    /** The smallest element under the point (clickable ones first). */
    function elementAt(x, y) {
      const v = stats.view;
      if (!v || !v.elements) return undefined;
      const under = v.elements.filter((e) => x >= e.bounds[0] && x < e.bounds[2] && y >= e.bounds[1] && y < e.bounds[3]);
      const area = (e) => (e.bounds[2] - e.bounds[0]) * (e.bounds[3] - e.bounds[1]);
      under.sort((a, b) => Number(b.is_clickable || b.is_editable) - Number(a.is_clickable || a.is_editable) || area(a) - area(b));
      return under[0];
    }
  }

  (async function main() {
    await Farm.header("operate");
    const q = Farm.query();
    if (q.episode) episodePage(q.episode);
    else await listPage();
  })();
})();
