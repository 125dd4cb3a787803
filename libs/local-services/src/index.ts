/**
 * @module @farm/local-services
 * Private Redis and adb servers on free loopback ports, for tests, the demo and load tests; and an
 * OpenAI-compatible chat-completions stand-in answering from a script (`startLlmStandIn`).
 * Nothing here touches ports 5037, 6379 or 5554..5585, so services already on the machine are left alone.
 *
 *   const redis = await startRedis(); const adb = await startAdbServer();
 *   ...; await adb.close(); await redis.close();
 */
// Re-exported for the tests and tools that already take them from here; the one home is @farm/net-ports.
export { freePort } from "@farm/net-ports";
export { startRedis, type LocalRedis } from "./redis.ts";
export { startAdbServer, adbServerAnswers, adbServerDevices, type LocalAdbServer } from "./adb-server.ts";
export { startManagedChild, type ManagedChild } from "./child.ts";
export { startRedisCluster, assembleRedisCluster, redisClusterNodeArgs, redisClusterCli, slotRangesInclude, type LocalRedisCluster, type ClusterNode, type StartRedisClusterOptions } from "./redis-cluster.ts";
export { startLlmStandIn, type LlmStandIn, type LlmStandInOptions, type RecordedRequest, type StandInEntry, type StandInReply, type StandInAction, type PromptElement } from "./llm-stand-in.ts";
