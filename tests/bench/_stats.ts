/**
 * Summaries of repeated measurements. Pure.
 *
 * Properties:
 * - percentile(xs, p) is the nearest-rank percentile: the smallest sample with at least p% of the
 *   samples at or below it (so p99 of 100 samples is the 99th smallest, never an interpolation).
 * - median is the middle sample, or the mean of the two middle ones for an even count.
 * - Every function leaves its input unsorted and returns NaN for no samples.
 */

export function sorted(xs: readonly number[]): number[] {
  return [...xs].sort((a, b) => a - b);
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = sorted(xs);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = sorted(xs);
  const rank = Math.max(1, Math.ceil((p / 100) * s.length));
  return s[Math.min(rank, s.length) - 1] as number;
}

export const min = (xs: readonly number[]): number => (xs.length ? Math.min(...xs) : Number.NaN);
export const max = (xs: readonly number[]): number => (xs.length ? Math.max(...xs) : Number.NaN);

/** "12.3" style with a fixed number of decimals; "n/a" for NaN or undefined. */
export function fmt(x: number | undefined, decimals = 1): string {
  return x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(decimals);
}

/** Milliseconds as "850 ms" below 10 s, else "12.3 s". */
export function fmtMs(ms: number | undefined): string {
  if (ms === undefined || Number.isNaN(ms)) return "n/a";
  return ms < 10_000 ? `${ms.toFixed(ms < 10 ? 1 : 0)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function fmtMiB(bytes: number | undefined): string {
  return bytes === undefined || Number.isNaN(bytes) ? "n/a" : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** "median (min–max, n=3)" of the samples, each formatted by `f`. */
export function spread(xs: readonly number[], f: (x: number) => string): string {
  if (xs.length === 0) return "n/a";
  if (xs.length === 1) return f(xs[0] as number);
  return `${f(median(xs))} (${f(min(xs))}–${f(max(xs))}, n=${xs.length})`;
}
