// A device screen with overlays, drawn on a canvas: the frame, the element boxes (on request), and the step's
// action: tap point, swipe arrow, the element the action named (its box), typed text, other ops as a label.
// Positions: UI actions in device pixels, AndroidEnv touches in [0, 1]; the device size comes from the
// recorded tree (its windows), else the frame's own size.
"use strict";
(function () {
  const Farm = (window.Farm = window.Farm || {});
  /** Colours the tests look for. */
  Farm.SCREEN_COLORS = { tap: "#ff00ff", box: "#ff9900", elements: "#00c8ff", invalid: "#ff2020", swipe: "#ff00ff" };
  const C = Farm.SCREEN_COLORS;

  function label(ctx, text, x, y, scale, color) {
    ctx.font = `${Math.round(14 * scale)}px system-ui, sans-serif`;
    const w = ctx.measureText(text).width + 10 * scale;
    const h = 20 * scale;
    const lx = Math.max(0, Math.min(ctx.canvas.width - w, x));
    const ly = Math.max(0, Math.min(ctx.canvas.height - h, y));
    ctx.fillStyle = "rgba(20,20,30,0.85)";
    ctx.fillRect(lx, ly, w, h);
    ctx.fillStyle = color || "#fff";
    ctx.fillText(text, lx + 5 * scale, ly + 15 * scale);
  }

  function arrow(ctx, x0, y0, x1, y1, scale) {
    ctx.strokeStyle = C.swipe;
    ctx.lineWidth = 4 * scale;
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1, y1);
    ctx.stroke();
    const a = Math.atan2(y1 - y0, x1 - x0);
    const L = 18 * scale;
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - L * Math.cos(a - 0.4), y1 - L * Math.sin(a - 0.4));
    ctx.lineTo(x1 - L * Math.cos(a + 0.4), y1 - L * Math.sin(a + 0.4));
    ctx.closePath();
    ctx.fillStyle = C.swipe;
    ctx.fill();
  }

  /**
   * Draws and returns what it drew, in device pixels and canvas pixels (the tests read these back):
   * { tap: {x, y} | null, canvasTap: {x, y} | null, box: [l, t, r, b] | null, element: index | null }
   */
  Farm.drawScreen = function drawScreen(canvas, o) {
    const img = o.image;
    const screen = o.screen || (img ? { width: img.naturalWidth, height: img.naturalHeight } : { width: 1080, height: 1920 });
    const cw = img ? img.naturalWidth : Math.min(540, screen.width);
    const ch = img ? img.naturalHeight : Math.round((cw * screen.height) / screen.width);
    canvas.width = cw;
    canvas.height = ch;
    const ctx = canvas.getContext("2d");
    const sx = cw / screen.width;
    const sy = ch / screen.height;
    const scale = Math.max(0.6, cw / 540);
    if (img) ctx.drawImage(img, 0, 0);
    else {
      ctx.fillStyle = "#2a2d35";
      ctx.fillRect(0, 0, cw, ch);
      label(ctx, "no frame recorded for this screen", 10, 10, scale);
    }
    const elements = o.elements || [];
    const boxOf = (b) => [b[0] * sx, b[1] * sy, (b[2] - b[0]) * sx, (b[3] - b[1]) * sy];
    if (o.showElements) {
      ctx.lineWidth = Math.max(1, 1.5 * scale);
      ctx.strokeStyle = C.elements;
      ctx.font = `${Math.round(11 * scale)}px system-ui, sans-serif`;
      for (const e of elements) {
        if (!e || !Array.isArray(e.bounds)) continue;
        const [x, y, w, h] = boxOf(e.bounds);
        ctx.strokeRect(x, y, w, h);
        ctx.fillStyle = C.elements;
        ctx.fillText(String(e.index), x + 2, y + 11 * scale);
      }
    }
    const out = { tap: null, canvasTap: null, box: null, element: null };
    const step = o.step;
    if (!step) return out;
    const r = step.resolved || {};
    if (step.invalid) {
      ctx.strokeStyle = C.invalid;
      ctx.lineWidth = 8 * scale;
      ctx.strokeRect(0, 0, cw, ch);
      label(ctx, `invalid: ${String(step.invalid).slice(0, 80)}`, 8 * scale, 8 * scale, scale, "#ffb3b3");
      return out;
    }
    if (typeof r.element === "number" && elements[r.element] && Array.isArray(elements[r.element].bounds)) {
      out.element = r.element;
      out.box = elements[r.element].bounds.slice();
      const [x, y, w, h] = boxOf(out.box);
      ctx.strokeStyle = C.box;
      ctx.lineWidth = 4 * scale;
      ctx.strokeRect(x, y, w, h);
    }
    let px = null;
    let py = null;
    if (step.touch && step.touch.type === "TOUCH") {
      px = step.touch.x * screen.width;
      py = step.touch.y * screen.height;
    } else if (typeof r.x === "number" && typeof r.y === "number") {
      px = r.x;
      py = r.y;
    }
    const op = r.op || (step.touch ? step.touch.type : "");
    if (op === "swipe" && px !== null && typeof r.toX === "number" && typeof r.toY === "number") {
      arrow(ctx, px * sx, py * sy, r.toX * sx, r.toY * sy, scale);
      out.tap = { x: px, y: py };
      out.canvasTap = { x: Math.round(px * sx), y: Math.round(py * sy) };
    } else if (px !== null) {
      const cx = px * sx;
      const cy = py * sy;
      ctx.strokeStyle = C.tap;
      ctx.lineWidth = 3 * scale;
      ctx.beginPath();
      ctx.arc(cx, cy, 18 * scale, 0, 2 * Math.PI);
      ctx.stroke();
      ctx.fillStyle = C.tap;
      ctx.beginPath();
      ctx.arc(cx, cy, 6 * scale, 0, 2 * Math.PI);
      ctx.fill();
      out.tap = { x: px, y: py };
      out.canvasTap = { x: Math.round(cx), y: Math.round(cy) };
      if (op === "double_tap" || op === "long_press") label(ctx, op.replace("_", " "), cx + 20 * scale, cy - 10 * scale, scale);
    }
    if (op === "type" && typeof r.text === "string") {
      const at = out.box ? boxOf(out.box) : [8 * scale, ch - 40 * scale, 0, 0];
      label(ctx, `⌨ “${r.text.slice(0, 60)}”`, at[0], at[1] + at[3] + 4 * scale, scale, "#ffe27a");
    } else if (op && !["tap", "double_tap", "long_press", "swipe", "type", "TOUCH", "LIFT", "REPEAT"].includes(op)) {
      const what = r.key || r.app || r.goalStatus || r.text || (r.durationMs ? `${r.durationMs} ms` : "");
      label(ctx, `${op}${what ? `: ${String(what).slice(0, 60)}` : ""}`, 8 * scale, 8 * scale, scale, "#ffe27a");
    }
    return out;
  };
})();
