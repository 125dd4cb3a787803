/**
 * GRPO-style groups (issue 38) over committed episodes: the episodes of one task instance (campaign, groupIndex),
 * each member once; a group is complete when its groupSize members are there. Statistics: mean and (population)
 * standard deviation of the members' total rewards, and whether they are all equal (no signal for GRPO: advantage
 * (r − mean) / std is zero). One rule for `farm trajectories inspect` and the data set.
 */
export interface GroupMemberFacts {
  episodeId: string;
  campaignId: string;
  groupIndex?: number;
  groupMember?: number;
  groupSize?: number;
  totalReward: number;
}

export interface GroupStat {
  campaignId: string;
  groupIndex: number;
  size: number;
  /** Distinct members present. */
  members: number;
  complete: boolean;
  mean: number;
  std: number;
  /** Every member's reward equal (only said of complete groups). */
  uniform: boolean;
}

/** The groups of these episodes (episodes without a group are left out; a member seen twice counts once). */
export function groupStats(episodes: Iterable<GroupMemberFacts>): GroupStat[] {
  const groups = new Map<string, { campaignId: string; groupIndex: number; size: number; rewards: Map<number, number> }>();
  for (const e of episodes) {
    if (e.groupIndex === undefined || !e.groupSize) continue;
    const key = `${e.campaignId}\u0000${e.groupIndex}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { campaignId: e.campaignId, groupIndex: e.groupIndex, size: e.groupSize, rewards: new Map() }));
    if (!g.rewards.has(e.groupMember ?? 0)) g.rewards.set(e.groupMember ?? 0, e.totalReward);
  }
  const out: GroupStat[] = [];
  for (const g of groups.values()) {
    const r = [...g.rewards.values()];
    const mean = r.reduce((a, b) => a + b, 0) / r.length;
    const std = Math.sqrt(r.reduce((a, b) => a + (b - mean) ** 2, 0) / r.length);
    const complete = r.length >= g.size;
    out.push({ campaignId: g.campaignId, groupIndex: g.groupIndex, size: g.size, members: r.length, complete, mean, std, uniform: complete && r.every((v) => v === r[0]) });
  }
  return out.sort((a, b) => (a.campaignId < b.campaignId ? -1 : a.campaignId > b.campaignId ? 1 : a.groupIndex - b.groupIndex));
}

/** Totals over groups: complete, uniform among the complete, incomplete, mean std of the complete ones. */
export interface GroupsSummary {
  complete: number;
  uniform: number;
  incomplete: number;
  meanStd: number | null;
  /** The first 100 groups. */
  groups: GroupStat[];
}

export function summarizeGroups(stats: readonly GroupStat[]): GroupsSummary {
  const complete = stats.filter((g) => g.complete);
  return {
    complete: complete.length,
    uniform: complete.filter((g) => g.uniform).length,
    incomplete: stats.length - complete.length,
    meanStd: complete.length ? complete.reduce((a, g) => a + g.std, 0) / complete.length : null,
    groups: stats.slice(0, 100),
  };
}
