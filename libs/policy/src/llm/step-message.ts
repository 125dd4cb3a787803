/**
 * A step's first message to the model: the prompt filled from the observation (goal, history, elements, the screen's
 * size and the step), and the screenshot when the policy sends one. The size is the screen *as shown* (width and
 * height swap in landscape): the frame the elements' bounds and an action's x, y are in and are checked against.
 */
import type { EpisodeContext, Observation } from "../types.ts";
import { shownScreenSize } from "../screen-size.ts";
import type { ChatMessage, ContentPart } from "./chat-client.ts";
import { renderPrompt } from "./prompt.ts";
import { elementLines, type PromptHistory } from "./screen-text.ts";
import { screenshotDataUrl } from "./screenshot.ts";

export interface StepMessageOptions {
  template: string;
  screenshot: boolean;
  screenshotMaxSide: number;
}

export async function stepMessage(o: StepMessageOptions, obs: Observation, ctx: EpisodeContext | undefined, history: PromptHistory): Promise<ChatMessage> {
  const screen = shownScreenSize(obs.screen ?? ctx?.screen ?? { width: 0, height: 0 }, obs.orientation);
  const text = renderPrompt(o.template, {
    goal: obs.goal ?? ctx?.goal ?? "",
    history: history.text(),
    elements: elementLines(obs.elements),
    screen_width: String(screen.width),
    screen_height: String(screen.height),
    step: String(obs.stepIndex + 1),
  });
  if (!o.screenshot || !obs.pixels) return { role: "user", content: text };
  const parts: ContentPart[] = [{ type: "text", text }, { type: "image_url", image_url: { url: await screenshotDataUrl(obs.pixels, o.screenshotMaxSide) } }];
  return { role: "user", content: parts };
}
