/**
 * Reads a `bun --cpu-prof-md` profile (Bun 1.4) into a small table for the report.
 *
 * Properties:
 * - hotFunctions(md, k): the first k rows of its "Hot Functions (Self Time)" table as
 *   [self %, self time, function, location]; the profile's own header line (duration, samples) as `summary`.
 * - latestProfile(dir, prefix): the newest *.md file in dir whose name starts with prefix (Bun names
 *   them CPU.* and Heap.*; case-insensitive), or undefined.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export function hotFunctions(md: string, k: number): { summary: string; rows: string[][] } {
  const lines = md.split("\n");
  const headerAt = lines.findIndex((l) => l.startsWith("| Duration"));
  const summary =
    headerAt >= 0
      ? (lines[headerAt + 2] ?? "")
          .replace(/^\|\s*|\s*\|$/g, "")
          .split(/\s*\|\s*/)
          .join(", ")
      : "";
  const start = lines.findIndex((l) => l.startsWith("## Hot Functions"));
  const rows: string[][] = [];
  if (start < 0) return { summary, rows };
  for (const line of lines.slice(start + 4)) {
    if (!line.startsWith("|")) break;
    const cells = line.replace(/^\|\s*|\s*\|$/g, "").split(/\s*\|\s*/);
    rows.push([cells[0] ?? "", cells[1] ?? "", cells[4] ?? "", (cells[5] ?? "").replace(/^`.*\/(src\/)/, "`$1")]);
    if (rows.length >= k) break;
  }
  return { summary, rows };
}

export function latestProfile(dir: string, prefix = ""): string | undefined {
  let best: { file: string; t: number } | undefined;
  try {
    for (const f of readdirSync(dir)) {
      if (!f.endsWith(".md") || !f.toLowerCase().startsWith(prefix.toLowerCase())) continue;
      const t = statSync(join(dir, f)).mtimeMs;
      if (!best || t > best.t) best = { file: join(dir, f), t };
    }
  } catch {
    return undefined;
  }
  return best?.file;
}
