// Solves families/todo_note_create.family.yaml as a module policy: reads the drawn title and body from the goal
// (`titled "T" with the text "B"`), taps NEW NOTE, types both into their fields, saves, then says complete.
export function createPolicy() {
  let saved = false;
  return {
    name: "todo_note_create-solution",
    needsPixels: false,
    needsElements: true,
    reset() {
      saved = false;
    },
    act(obs) {
      const m = /titled "([^"]*)" with the text "([^"]*)"/.exec(obs.goal ?? "");
      if (!m) return { action_type: "status", goal_status: "infeasible" };
      const [, title, body] = m;
      const els = obs.elements ?? [];
      const byId = (id) => els.find((e) => e.resource_id.endsWith(`:id/${id}`));
      if (saved) return { action_type: "status", goal_status: "complete" };
      const titleField = byId("title_input");
      const bodyField = byId("body_input");
      if (titleField && bodyField) {
        if (titleField.text !== title) return { action_type: "input_text", index: titleField.index, text: title };
        if (bodyField.text !== body) return { action_type: "input_text", index: bodyField.index, text: body };
        saved = true;
        return { action_type: "click", index: byId("save").index };
      }
      const add = byId("new_note");
      if (add) return { action_type: "click", index: add.index };
      return { action_type: "navigate_back" };
    },
  };
}
