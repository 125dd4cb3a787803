// Solves families/settings_brightness_set.family.yaml as a module policy (`--policy module:<this file>`): the goal
// says max or min, which a fixed script cannot read. Opens Display, then taps the brightness slider at its right
// end (max: screen_brightness 255) or its left end (min: 1), then says complete. Acts on the screen's elements.
export function createPolicy() {
  let tapped = false;
  return {
    name: "settings_brightness_set-solution",
    needsPixels: false,
    needsElements: true,
    reset() {
      tapped = false;
    },
    act(obs) {
      const els = obs.elements ?? [];
      if (tapped) return { action_type: "status", goal_status: "complete" };
      const bar = els.find((e) => e.class_name === "android.widget.SeekBar");
      if (bar) {
        tapped = true;
        const max = /\bmax\b/i.test(obs.goal ?? "");
        const [l, t, r, b] = bar.bounds;
        return { action_type: "click", x: max ? r - 1 : l, y: Math.floor((t + b) / 2) };
      }
      const display = els.find((e) => e.text === "Display" && e.is_clickable);
      if (display) return { action_type: "click", index: display.index };
      return { action_type: "status", goal_status: "infeasible" };
    },
  };
}
