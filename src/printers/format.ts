/**
 * Durations and tables as kubectl prints them, so devctl's output reads like `kubectl get`.
 *
 * - humanDuration(ms) is a port of k8s.io/apimachinery/pkg/util/duration.HumanDuration: "5s", "3m20s",
 *   "15m", "2h30m", "20h", "4d5h", "30d", "2y100d"; under -1 s is "<invalid>", -1 s..0 is "0s".
 * - formatTable(rows) lays cells out as kubectl's tab writer does (cli-runtime printers: min width 6,
 *   padding 3, spaces): every column but the last padded to max(widest cell + 3, 6).
 */

export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

export const TABLE_MIN_WIDTH = 6;
export const TABLE_PADDING = 3;

export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      if (i < row.length - 1) widths[i] = Math.max(widths[i] ?? 0, cell.length + TABLE_PADDING, TABLE_MIN_WIDTH);
    });
  }
  return rows
    .map((row) => row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i] ?? 0) : cell)).join(""))
    .join("\n");
}
