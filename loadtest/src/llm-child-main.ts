/** The child of llm-child.ts: starts the stand-in with the options in argv[2] (JSON), prints `endpoint <url>`, closes on SIGTERM. */
import { once } from "node:events";
import { runUntilSignal } from "@farm/lifecycle";
import { startLlmStandIn, type LlmStandInOptions } from "@farm/local-services";

const opts = JSON.parse(process.argv[2] ?? "{}") as LlmStandInOptions;
await runUntilSignal(async (stop) => {
  const llm = await startLlmStandIn(opts);
  process.stdout.write(`endpoint ${llm.endpoint}\n`);
  if (!stop.aborted) await once(stop, "abort");
  await llm.close();
});
