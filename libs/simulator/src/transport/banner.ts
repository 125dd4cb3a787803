/** Features the host uses to pick shell v2 (exit codes), `cmd` installs and STA2 stats (§2). */
export const DEVICE_FEATURES = ["shell_v2", "cmd", "stat_v2"] as const;

/** Product properties shown by `adb devices -l` when the device does not supply its own. */
export const DEVICE_PRODUCT = { name: "sim", model: "simmodel", device: "simdev" } as const;

/** CNXN banner `device::ro.product.name=…;ro.product.model=…;ro.product.device=…;features=…`. */
export function deviceBanner(product: { name: string; model: string; device: string } = DEVICE_PRODUCT): string {
  return (
    `device::ro.product.name=${product.name};ro.product.model=${product.model};` +
    `ro.product.device=${product.device};features=${DEVICE_FEATURES.join(",")}`
  );
}
