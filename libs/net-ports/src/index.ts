/**
 * @module @farm/net-ports
 * The farm's one place that asks the kernel about loopback TCP ports: a free one, whether one is free,
 * listening on a free one, waiting until one answers. `.ci/port-probes.test.ts` fails on a port probe
 * anywhere else in the sources.
 *
 *   const port = await freePort(); if (await portFree(5554)) …; await waitForPort(port, 10_000);
 */
export { isReservedPort, freePort, portFree, listenOnFreePort, waitForPort, PortError, type PortErrorCode } from "./ports.ts";
