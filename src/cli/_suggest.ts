/**
 * "Did you mean ...?" as kubectl (cobra) suggests: the closest candidate within edit distance 2, or one that
 * starts with what was typed (at least two characters). Ties go to the earlier candidate. Pure.
 */

export function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j] as number;
      row[j] = Math.min(up + 1, (row[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length] as number;
}

export const MAX_DISTANCE = 2;

export function suggest(typed: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = distance(typed.toLowerCase(), name.toLowerCase());
    const near = d <= MAX_DISTANCE || (typed.length >= 2 && name.startsWith(typed));
    if (near && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}
