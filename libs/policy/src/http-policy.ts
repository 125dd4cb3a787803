/**
 * The remote policy: for models served elsewhere. Each act() POSTs a protocol 2 step message (wire.ts,
 * PROTOCOL.md) to the URL and expects `{"actionType": "TOUCH"|"LIFT"|"REPEAT", "touchPosition": [x, y]}`.
 * A server that declares `X-Policy-Protocol: 2` on an answer is also sent an `episode_end` message when
 * an episode ends (a protocol 1 server never sees one). Errors: see http-endpoint.ts.
 * The version is the server's `X-Policy-Version` header (latest seen), else "unknown". Each answer's own version (the
 * body's `policy_version`, else that response's header) travels with it as the decision's `version` (a step's policyVersion).
 */
import { parseWireAnswer } from "./answer.ts";
import { httpEndpoint, type HttpEndpointOptions } from "./http-endpoint.ts";
import type { EpisodeContext, Observation, Policy, PolicyAnswer } from "./types.ts";
import { newEpisodeId, stringifyWire, toWireEpisodeEnd, toWireRequest, type PixelEncoding, type WireEpisode } from "./wire.ts";

export interface HttpPolicyOptions extends HttpEndpointOptions {
  /** Whether to ask the runner for pixels. Default true (a remote model usually looks at the screen). */
  needsPixels?: boolean;
  /** The server reads `observation.elements` (the screen as elements, read every step). @default false */
  needsElements?: boolean;
  /** How pixels travel: "png" (default, smaller) or "rgb" (raw bytes, no encoding cost). */
  pixelEncoding?: PixelEncoding;
}

export { POLICY_VERSION_HEADER, POLICY_PROTOCOL_HEADER, snippet } from "./http-endpoint.ts";

export function httpPolicy(url: string, opts: HttpPolicyOptions = {}): Policy {
  const endpoint = httpEndpoint(url, { ...opts, maxResponseBytes: opts.maxResponseBytes ?? 65_536 });
  const encoding = opts.pixelEncoding ?? "png";
  let context: EpisodeContext | null = null;
  let episode: WireEpisode | null = null;

  return {
    name: `http:${endpoint.url.host}${endpoint.url.pathname}`,
    get version() {
      return endpoint.version;
    },
    needsPixels: opts.needsPixels ?? true,
    needsElements: opts.needsElements ?? false,
    async reset(ctx) {
      context = { ...ctx, screen: { ...ctx.screen } };
      episode = { id: newEpisodeId(), seed: ctx.seed, index: ctx.episodeIndex };
    },
    act(observation: Observation, signal?: AbortSignal): Promise<PolicyAnswer> {
      const body = stringifyWire(toWireRequest(observation, context, encoding, episode));
      return endpoint.request(body, (json, meta) => parseWireAnswer(json, meta.version), "answer is not a valid action", signal);
    },
    async endEpisode(end) {
      // Protocol 1 servers answer every POST with an action; only a server that declared 2 is told.
      if (endpoint.serverProtocol < 2 || endpoint.closed) return;
      await endpoint.request(stringifyWire(toWireEpisodeEnd(end, episode)), () => undefined, "episode_end answer");
    },
    async close() {
      endpoint.close();
    },
  };
}
