/** The network lab: namespaces, links, silent partitions and latency for the farm's benchmarks and tests. */
export { NetLab, inLab, type LabHost, type LabRelay } from "./lab.ts";
export { labUnavailableReason, removeStaleLabs, listNamespaces, NetLabError } from "./netns.ts";
export { startDelayRelay, type DelayRelay } from "./delay-relay.ts";
export { LabCluster, type LabClusterNode, type LabClusterOptions } from "./lab-cluster.ts";
