/**
 * A tiny parser for the Prometheus text exposition format (version 0.0.4), enough for tests:
 * HELP / TYPE lines and samples `name{l="v",…} value`. Throws on any line it cannot read, so a
 * malformed exposition fails the test.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: string;
}

export interface Exposition {
  families: Map<string, Family>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function parseValue(s: string): number {
  // Case-insensitive like Prometheus's own parser; prom-client prints NaN as "Nan" for some default metrics.
  const lower = s.toLowerCase();
  if (lower === "+inf" || lower === "inf") return Infinity;
  if (lower === "-inf") return -Infinity;
  if (lower === "nan") return NaN;
  const n = Number(s);
  if (Number.isNaN(n)) throw new Error(`bad sample value ${s}`);
  return n;
}

function parseLabels(body: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < body.length) {
    const m = LABEL.exec(body);
    if (!m) throw new Error(`bad labels in line: ${line}`);
    if (m[1]! in labels) throw new Error(`duplicate label ${m[1]} in line: ${line}`);
    labels[m[1]!] = m[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  }
  return labels;
}

export function parseExposition(text: string): Exposition {
  const families = new Map<string, Family>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      const f = families.get(name!) ?? { name: name!, help: "", type: "untyped" };
      if (kind === "HELP") f.help = rest!;
      else {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest!)) throw new Error(`bad TYPE: ${line}`);
        f.type = rest!;
      }
      families.set(name!, f);
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`unparseable line: ${line}`);
    samples.push({ name: m[1]!, labels: m[2] ? parseLabels(m[2], line) : {}, value: parseValue(m[3]!) });
  }
  return { families, samples };
}

/** The value of the one sample with this name whose labels include `labels`; undefined if none. */
export function valueOf(exp: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = exp.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${hits.length} samples match ${name} ${JSON.stringify(labels)}`);
  return hits[0]?.value;
}
