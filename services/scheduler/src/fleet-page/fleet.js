// The fleet page (shared pieces in /web/farm.js): polls the scheduler's GET /devices and GET /campaigns every 2 s and renders them.
// Everything from the network goes in with textContent (never innerHTML).
"use strict";
const POLL_MS = 2000;
/** Screens the user asked for, by "worker/serial" → last loaded object URL. */
const screensShown = new Set();

const { el, getJson } = window.Farm;

function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 90 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
}

function screenUrl(d) {
  return `/devices/${encodeURIComponent(d.worker)}/${encodeURIComponent(d.serial)}/screen?t=${Date.now()}`;
}

function deviceRow(d) {
  const key = `${d.worker}/${d.serial}`;
  const screenCell = el("td", {});
  const show = () => {
    screensShown.add(key);
    const img = el("img", { class: "screen", alt: `screen of ${d.serial}`, src: screenUrl(d) });
    screenCell.querySelector("img")?.remove();
    screenCell.append(img);
  };
  screenCell.append(el("button", { type: "button", onclick: show, "data-screen": key }, "screen"));
  if (screensShown.has(key)) show();
  const episode = d.campaignId !== undefined ? `${d.campaignId} #${d.episodeIndex ?? "?"}${d.step !== undefined ? ` · step ${d.step}` : ""}` : "—";
  return el(
    "tr",
    { "data-device": key, "data-serial": d.serial, "data-state": d.state },
    el("td", {}, d.serial),
    el("td", {}, el("span", { class: `state state-${d.state}` }, d.state)),
    el("td", {}, d.transport),
    el("td", { class: "episode" }, episode),
    el("td", {}, d.stepsPerSec.toFixed(1)),
    el("td", {}, String(d.relaunches)),
    el("td", { class: "error" }, d.lastError ? `${d.lastError} (${ago(d.lastErrorAt ?? Date.now())})` : "—"),
    screenCell,
  );
}

function renderDevices(fleet) {
  const box = document.getElementById("hosts");
  document.getElementById("device-count").textContent = `(${fleet.devices.length})`;
  if (fleet.devices.length === 0) {
    box.replaceChildren(el("p", { class: "muted" }, "no devices: no worker has sent a heartbeat in the last few seconds"));
    return;
  }
  const byWorker = new Map();
  for (const d of fleet.devices) {
    const k = `${d.host} · worker ${d.worker}`;
    if (!byWorker.has(k)) byWorker.set(k, []);
    byWorker.get(k).push(d);
  }
  const parts = [];
  for (const [title, devices] of byWorker) {
    const head = el("tr", {}, ...["device", "state", "transport", "campaign · episode · step", "steps/s", "relaunches", "last error", "screen"].map((h) => el("th", {}, h)));
    parts.push(el("h3", { "data-host": devices[0].host }, title), el("table", { class: "devices" }, el("thead", {}, head), el("tbody", {}, ...devices.map(deviceRow))));
  }
  box.replaceChildren(...parts);
}

function breakdown(c) {
  const items = [];
  for (const [k, v] of Object.entries(c.byOutcome || {})) items.push(`${k} ${v}`);
  for (const [k, v] of Object.entries(c.failuresByCode || {})) items.push(`failed ${k} ${v}`);
  return items.length ? items.join(" · ") : "—";
}

function campaignRow(c) {
  const pct = (n) => (c.episodes > 0 ? (100 * n) / c.episodes : 0);
  const bar = el("span", { class: "bar", title: `${c.completed} completed, ${c.failed} failed of ${c.episodes}` });
  // Sizes through CSSOM: the page's CSP forbids inline style attributes.
  const done = el("span", { class: "done" });
  done.style.width = `${pct(c.completed)}%`;
  const failed = el("span", { class: "failed" });
  failed.style.left = `${pct(c.completed)}%`;
  failed.style.width = `${pct(c.failed)}%`;
  bar.append(done, failed);
  return el(
    "tr",
    { "data-campaign": c.id, "data-state": c.state },
    el("td", {}, c.id, " ", el("a", { href: `/view/?campaign=${encodeURIComponent(c.id)}`, class: "muted" }, "episodes"), " ", el("a", { href: `/report?campaign=${encodeURIComponent(c.id)}`, class: "muted" }, "report")),
    el("td", {}, c.spec.taskId),
    el("td", {}, el("span", { class: `state state-${c.state}` }, c.state)),
    el("td", {}, bar, ` ${c.finished}/${c.episodes}`),
    el("td", { class: "outcomes" }, breakdown(c)),
    el("td", {}, c.running),
    el("td", {}, c.episodesPerSec.toFixed(2)),
  );
}

function renderCampaigns(list) {
  const box = document.getElementById("campaigns");
  if (list.campaigns.length === 0) {
    box.replaceChildren(el("p", { class: "muted" }, "no campaigns"));
    return;
  }
  const head = el("tr", {}, ...["campaign", "task", "state", "progress", "outcomes", "running", "episodes/s"].map((h) => el("th", {}, h)));
  box.replaceChildren(el("table", { class: "campaigns" }, el("thead", {}, head), el("tbody", {}, ...list.campaigns.map(campaignRow))));
}

async function refresh() {
  try {
    const [fleet, campaigns] = await Promise.all([getJson("/devices"), getJson("/campaigns?limit=20")]);
    renderDevices(fleet);
    renderCampaigns(campaigns);
    window.Farm.status(`updated ${new Date().toLocaleTimeString()}`);
  } catch (e) {
    window.Farm.status(`update failed: ${e.message}`);
  } finally {
    setTimeout(refresh, POLL_MS);
  }
}

window.Farm.header("fleet");
refresh();
