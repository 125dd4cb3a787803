/**
 * The home screen (com.android.launcher3): a grid of the installed apps that have activities.
 * Icon k sits in column k % 4, row ⌊k / 4⌋: x in [(0.05 + 0.225·col)W, +0.2W), y in [(0.15 + 0.16·row)H, +0.13H).
 * Tapping an icon starts that app's first activity (without RL extras).
 */
import type { Canvas } from "../../graphics/canvas.ts";
import type { ViewNode } from "../app-contract.ts";
import type { InstalledPackage, PackageManager } from "./package-manager.ts";
import { LAUNCHER_PACKAGE } from "./package-manager.ts";

function launchable(packages: PackageManager): InstalledPackage[] {
  return packages.list().filter((p) => p.activities.length > 0 && p.name !== LAUNCHER_PACKAGE);
}

function iconBox(k: number, w: number, h: number): [number, number, number, number] {
  const col = k % 4;
  const row = Math.floor(k / 4);
  const x = (0.05 + 0.225 * col) * w;
  const y = (0.15 + 0.16 * row) * h;
  return [x, y, x + 0.2 * w, y + 0.13 * h];
}

export function launcherHit(packages: PackageManager, x: number, y: number, w: number, h: number): InstalledPackage | undefined {
  return launchable(packages).find((_, k) => {
    const b = iconBox(k, w, h);
    return x >= b[0] && x < b[2] && y >= b[1] && y < b[3];
  });
}

function iconColor(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return 0x404040 | (h & 0xbfbfbf);
}

export function renderLauncher(c: Canvas, packages: PackageManager): void {
  const { width: w, height: h } = c;
  c.fill(0x1e3a5f);
  c.rect(0, 0, w, 0.04 * h, 0x000000);
  const scale = Math.max(1, Math.floor(w / 240));
  launchable(packages).forEach((p, k) => {
    const b = iconBox(k, w, h);
    c.rect(b[0], b[1], b[2] - b[0], (b[3] - b[1]) * 0.75, iconColor(p.name));
    c.textCentered(b[0] - 0.02 * w, b[1] + (b[3] - b[1]) * 0.78, b[2] - b[0] + 0.04 * w, (b[3] - b[1]) * 0.22, p.label.slice(0, 8), scale, 0xffffff);
  });
}

/** The home screen as views: one labelled, clickable icon per launchable app (what a tap on it starts). */
export function launcherTree(packages: PackageManager, w: number, h: number): ViewNode {
  const icons: ViewNode[] = launchable(packages).map((p, k) => ({
    cls: "android.widget.TextView",
    id: "app:id/icon",
    key: `icon/${p.name}`,
    text: p.label,
    desc: p.label,
    bounds: iconBox(k, w, h).map(Math.round) as [number, number, number, number],
    clickable: true,
    longClickable: true,
    focusable: true,
  }));
  return {
    cls: "android.widget.FrameLayout",
    id: "app:id/launcher",
    bounds: [0, 0, w, h],
    children: [{ cls: "android.view.ViewGroup", id: "app:id/workspace", bounds: [0, Math.round(0.1 * h), w, h], scrollable: false, children: icons }],
  };
}
