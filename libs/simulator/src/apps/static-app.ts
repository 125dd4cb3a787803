/** A do-nothing app for packages without a behaviour (system apps, unknown implementation ids): a title bar and a blank page. */
import type { Canvas } from "../graphics/canvas.ts";
import type { AppFactory, AppHost, SimApp, ViewNode } from "../android/app-contract.ts";

class StaticApp implements SimApp {
  constructor(
    private readonly host: AppHost,
    public activity: string,
    private readonly title: string,
  ) {}

  onNewIntent(activityClass: string): void {
    this.activity = activityClass;
  }

  render(c: Canvas): void {
    const { width, height } = this.host.screen;
    c.fill(0xfafafa);
    c.rect(0, 0, width, height * 0.08, 0x455a64);
    c.textCentered(0, 0, width, height * 0.08, this.title.slice(0, 20), 2, 0xffffff);
  }

  viewHierarchy(): ViewNode {
    const { width, height } = this.host.screen;
    const title: ViewNode = { cls: "android.widget.TextView", id: "android:id/title", bounds: [0, 0, width, Math.round(height * 0.08)], text: this.title.slice(0, 20) };
    return { cls: "android.widget.FrameLayout", id: "app:id/root", bounds: [0, 0, width, height], children: [title] };
  }
}

export function staticAppFactory(title: string): AppFactory {
  return (host, launch) => new StaticApp(host, launch.activity, title);
}
