// Minimal typing for snappyjs 0.7.0 (ships none): raw Snappy blocks, the same type in and out.
declare module "snappyjs" {
  export function compress<T extends Uint8Array | ArrayBuffer>(uncompressed: T): T;
  export function uncompress<T extends Uint8Array | ArrayBuffer>(compressed: T, maxLength?: number): T;
  const snappy: { compress: typeof compress; uncompress: typeof uncompress };
  export default snappy;
}
