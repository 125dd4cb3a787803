// Solves families/todo_count_question.family.yaml as a module policy: counts the notes Todo's list shows (the
// family draws at most 7, all on one screen), answers the number, then says complete.
export function createPolicy() {
  let answered = false;
  return {
    name: "todo_count_question-solution",
    needsPixels: false,
    needsElements: true,
    reset() {
      answered = false;
    },
    act(obs) {
      if (answered) return { action_type: "status", goal_status: "complete" };
      answered = true;
      const n = (obs.elements ?? []).filter((e) => e.resource_id.endsWith(":id/note_title")).length;
      return { action_type: "answer", text: String(n) };
    },
  };
}
