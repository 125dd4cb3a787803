/**
 * The evaluation report as one HTML page: live on the scheduler (assets from /web/), or one self-contained file
 * with every asset inline (`farm report --out report.html`, opens offline). The numbers travel as JSON in the
 * page and report.js draws them.
 */
import type { Evaluation } from "@farm/dataset";
import { pageHtml } from "./web-assets.ts";

export interface ReportPageOptions {
  /** Inline every asset (a file that opens with no server). */
  inline: boolean;
  /** Where the episode viewer lives (`/` on the scheduler; `http://127.0.0.1:8421/` for `farm trajectories view`); null: no links. */
  viewerBase: string | null;
  /** Shown beside the links: how to start the viewer they point at. */
  viewerHint?: string;
}

export function reportHtml(evaluation: Evaluation, o: ReportPageOptions): string {
  return pageHtml({
    title: `report: ${evaluation.title}`,
    page: "report",
    assets: ["farm.css", "farm.js", "report.js"],
    inline: o.inline,
    data: { evaluation, viewerBase: o.viewerBase, viewerHint: o.viewerHint ?? null, offline: o.inline },
  });
}
