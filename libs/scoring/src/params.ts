/**
 * An episode's parameters (FAMILIES.md "Parameters"): fixed ones as the campaign gave them, the rest drawn in
 * declaration order from the episode's seed, so episode i gets the same values on every retry and every host.
 * CONTRACT STUB: only `const`, `choice` and `int` are drawn yet; the families work completes the generators.
 */
import { createSeededRandom } from "@farm/seeded-random";
import type { ParamDecl, ParamValue, TaskParams } from "@farm/task";
import { ScoringError } from "./errors.ts";

export function drawParams(decls: readonly ParamDecl[], key: { seed: number; fixed?: TaskParams }): TaskParams {
  const out: Record<string, ParamValue> = Object.create(null);
  const rng = createSeededRandom(key.seed);
  for (const d of decls) {
    const fixed = key.fixed && Object.hasOwn(key.fixed, d.name) ? key.fixed[d.name] : undefined;
    if (fixed !== undefined) {
      out[d.name] = fixed;
      continue;
    }
    const s = d.spec;
    if (s.kind === "const") out[d.name] = s.value;
    else if (s.kind === "choice") out[d.name] = s.values[Math.floor(rng.next() * s.values.length)]!;
    else if (s.kind === "int") out[d.name] = s.min + Math.floor(rng.next() * (s.max - s.min + 1));
    else throw new ScoringError("bad_param", `line ${d.line}: parameter ${d.name}: kind ${s.kind} is not drawn yet`);
  }
  return Object.freeze(out);
}
