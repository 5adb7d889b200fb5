/** Generated hostile resource names, for the encoding and fuzz tests. */

/** A name mixing ASCII (control characters included), other scripts, emoji, separators, NUL, BOM and bidi marks. */
export function randomName(random: () => number): string {
  const pools = [
    () => String.fromCharCode(Math.floor(random() * 128)),
    () => String.fromCodePoint(0x80 + Math.floor(random() * 0x2000)),
    () => String.fromCodePoint(0x1f600 + Math.floor(random() * 80)),
    () => ['/', '..', '.', '%', '%2F', '\u0000', '\ufeff', '\u202e', 'é', 'é'][Math.floor(random() * 10)]!,
  ];
  let name = '';
  const length = 1 + Math.floor(random() * 24);
  for (let i = 0; i < length; i++) name += pools[Math.floor(random() * pools.length)]!();
  return name;
}

/** mulberry32: a small seeded generator, so a failure can be replayed. */
export function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
