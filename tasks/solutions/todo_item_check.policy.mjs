// Solves families/todo_item_check.family.yaml as a module policy: reads the note's title from the goal
// (`the note "T"`), scrolls the list down until that note's "Done: T" checkbox is on the screen (at most 6 times),
// taps it, then says complete.
export function createPolicy() {
  let scrolls = 0;
  let tapped = false;
  return {
    name: "todo_item_check-solution",
    needsPixels: false,
    needsElements: true,
    reset() {
      scrolls = 0;
      tapped = false;
    },
    act(obs) {
      const m = /the note "([^"]*)"/.exec(obs.goal ?? "");
      if (!m) return { action_type: "status", goal_status: "infeasible" };
      if (tapped) return { action_type: "status", goal_status: "complete" };
      const box = (obs.elements ?? []).find((e) => e.content_description === `Done: ${m[1]}`);
      if (box) {
        tapped = true;
        return box.is_checked ? { action_type: "status", goal_status: "complete" } : { action_type: "click", index: box.index };
      }
      if (scrolls++ >= 6) return { action_type: "status", goal_status: "infeasible" };
      const list = (obs.elements ?? []).find((e) => e.resource_id.endsWith(":id/notes"));
      return list ? { action_type: "scroll", direction: "down", index: list.index } : { action_type: "scroll", direction: "down" };
    },
  };
}
