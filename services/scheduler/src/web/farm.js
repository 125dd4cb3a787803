// The farm's pages share this: element building (text only, never innerHTML), JSON fetches with the
// login redirect, the page header (no log-out button without a token), number formats.
"use strict";
(function () {
  const Farm = (window.Farm = window.Farm || {});

  /** el("td", { class: "num", "data-x": 1, onclick: fn }, "text", childNode, …) */
  Farm.el = function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  };

  /** GET a JSON route of this server; 401 sends the browser to the login form and back. */
  Farm.getJson = async function getJson(path) {
    const r = await fetch(path, { headers: { accept: "application/json" }, credentials: "same-origin" });
    if (r.status === 401) {
      location.href = `/login?next=${encodeURIComponent(location.pathname + location.search)}`;
      throw new Error("not logged in");
    }
    if (!r.ok) {
      let msg = `HTTP ${r.status}`;
      try {
        const j = await r.json();
        if (j && j.error && j.error.message) msg = j.error.message;
      } catch (_) {
        // not JSON
      }
      throw new Error(`${path}: ${msg}`);
    }
    return r.json();
  };

  /** What this server offers: { login: bool, pages: [{ id, href, title }] } (static pages get a default). */
  Farm.session = async function session() {
    if (Farm.sessionInfo) return Farm.sessionInfo;
    try {
      Farm.sessionInfo = await Farm.getJson("/web/session.json");
    } catch (_) {
      Farm.sessionInfo = { login: false, pages: [] };
    }
    return Farm.sessionInfo;
  };

  /** Fills <header id="farm-header"> with the title, the pages' links, a status line and (token mode only) log out. */
  Farm.header = async function header(active) {
    const h = document.getElementById("farm-header");
    if (!h) return;
    const s = await Farm.session();
    const links = [];
    for (const p of s.pages || []) {
      if (links.length) links.push(" · ");
      links.push(Farm.el("a", { href: p.href, class: p.id === active ? "active" : undefined }, p.title));
    }
    const parts = [Farm.el("h1", {}, "Android episode farm"), Farm.el("nav", {}, ...links), Farm.el("span", { id: "updated", class: "muted" }, "")];
    if (s.login) parts.push(Farm.el("form", { method: "post", action: "/logout", class: "logout" }, Farm.el("button", { type: "submit" }, "log out")));
    h.replaceChildren(...parts);
  };

  Farm.status = function status(text) {
    const u = document.getElementById("updated");
    if (u) u.textContent = text;
  };

  Farm.pct = (x, digits = 1) => (x === null || x === undefined || Number.isNaN(x) ? "—" : `${(100 * x).toFixed(digits)} %`);
  Farm.num = (x, digits = 2) => {
    if (x === null || x === undefined || Number.isNaN(Number(x))) return "—";
    let t = Number(x).toFixed(digits);
    if (t.includes(".")) t = t.replace(/0+$/, "").replace(/\.$/, "");
    return t;
  };
  Farm.time = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : "—");
  Farm.query = () => Object.fromEntries(new URLSearchParams(location.search));
  Farm.qs = (o) => new URLSearchParams(Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== "")).toString();
})();
