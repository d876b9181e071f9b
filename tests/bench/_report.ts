/**
 * BENCHMARKS.md from the sections the scenarios returned. Pure apart from reading the previous file.
 *
 * Properties:
 * - The header names the machine (cores, memory, CPU model, kernel), the versions (Bun, Kubernetes,
 *   devctl and its commit), the date, the cluster, the load average before and after, and how busy
 *   the whole machine was while the run went on: a shared machine is said to be shared.
 * - One summary table (scenario, goal, result, verdict), then the issue's goals of devctl against the Go
 *   peer (goal, bound, both figures, ratio, verdict; see _goals.ts) in the issue's order (GOAL_ORDER of the
 *   sections that report them), then one section per scenario with its tables,
 *   its charts (as images of the SVG files beside the report, see chartFiles) and notes, in the issue's order.
 * - The hand-written analysis between ANALYSIS_START and ANALYSIS_END in the previous file is kept, so a
 *   rerun refreshes the numbers without losing it (it says which run it was written for). It is marked
 *   stale (STALE_MARK, a line naming the figures) when figures it quotes from the previous report's
 *   tables are not in the new one; the mark stays until someone revises the analysis and removes it.
 */
import { DEFAULT_MEMORY } from "../../src/install/resources.ts";
import { AS_INSTALLED_ENV } from "./_operator.ts";
import type { Section, Table } from "./_context.ts";
import type { CpuUsage } from "./_proc.ts";
import { goalsTable } from "./_goals.ts";
import { fmt } from "./_stats.ts";

/** Sections in the order the issue lists their goals: convergence, requests, CPU, memory, heal, update, restart. */
export const GOAL_ORDER = ["convergence", "memory", "heal", "update", "steady"];

export const ANALYSIS_START = "<!-- analysis:start (hand-written; kept by `npm run bench`) -->";
export const ANALYSIS_END = "<!-- analysis:end -->";
export const STALE_MARK = "> **Stale:**";

/** Numbers in `text` (thousands separators dropped), at least two characters long. */
const figures = (text: string) =>
  new Set([...text.matchAll(/\d[\d,]*(?:\.\d+)?/g)].map((m) => m[0].replace(/,/g, "")).filter((n) => n.length > 1));

/** The analysis, with a stale mark if figures it quotes from the previous report are gone from the new one. */
export function carryAnalysis(analysis: string, previousBody: string, newBody: string): string {
  if (analysis.includes(STALE_MARK)) return analysis;
  // The run's results: table rows and notes, not the date or the load average of the header.
  const results = (body: string) =>
    body
      .split("\n")
      .filter((l) => l.startsWith("|") || (l.startsWith("- ") && !l.startsWith("- Load:")))
      .join("\n");
  const before = figures(results(previousBody));
  const now = figures(results(newBody));
  const changed = [...figures(analysis)].filter((n) => before.has(n) && !now.has(n));
  if (changed.length === 0) return analysis;
  const list = changed.slice(0, 12).join(", ") + (changed.length > 12 ? ", …" : "");
  const mark = `${STALE_MARK} the figures this analysis quotes changed in a rerun (no longer in the tables: ${list}). Revise it, then delete this line.`;
  return analysis.replace(ANALYSIS_START, `${ANALYSIS_START}\n${mark}\n`);
}

export interface RunInfo {
  date: string;
  machine: { cores: number; memory: string; cpu: string; kernel: string };
  versions: { bun: string; kubernetes: string; devctl: string; peer?: string };
  cluster: string;
  command: string;
  loadBefore: string;
  loadAfter: string;
  /** Share of all cores busy over the whole run, and the share used by the benchmark's own processes. */
  machineBusy: number;
  durationSeconds: number;
}

export function table(t: Table): string {
  const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const left = t.left ?? 1;
  const lines = [row(t.head), row(t.head.map((_, i) => (i < left ? "---" : "---:"))), ...t.rows.map(row)];
  return `${t.caption ? `${t.caption}\n\n` : ""}${lines.join("\n")}`;
}

/** Rows "process | CPU seconds | cores used (CPU-s / wall)" for a CPU reading, largest first, plus the rest of the machine. */
export function cpuRows(u: CpuUsage): string[][] {
  const known = Object.entries(u.byProcess).sort((a, b) => b[1] - a[1]);
  const sum = known.reduce((s, [, v]) => s + v, 0);
  const rows = known.map(([name, s]) => [name, fmt(s, 2), fmt(s / u.wallSeconds, 2)]);
  rows.push([
    "everything else on the machine",
    fmt(Math.max(0, u.machineBusy - sum), 2),
    fmt(Math.max(0, u.machineBusy - sum) / u.wallSeconds, 2),
  ]);
  const cores = u.machineCapacity / u.wallSeconds;
  rows.push([
    `**all ${cores.toFixed(0)} cores**`,
    fmt(u.machineBusy, 2),
    `${fmt(u.machineBusy / u.wallSeconds, 2)} of ${cores.toFixed(0)} (${fmt((100 * u.machineBusy) / u.machineCapacity, 0)}% busy)`,
  ]);
  return rows;
}

export function render(info: RunInfo, sections: Section[], previous: string | undefined): string {
  const kept =
    previous?.includes(ANALYSIS_START) && previous.includes(ANALYSIS_END)
      ? previous.slice(previous.indexOf(ANALYSIS_START), previous.indexOf(ANALYSIS_END) + ANALYSIS_END.length)
      : undefined;
  const shared =
    info.machineBusy > 0
      ? `The whole machine was ${fmt(100 * info.machineBusy, 0)}% busy on average during the run (load average ${info.loadBefore} before, ${info.loadAfter} after); ` +
        "the CPU tables below separate the benchmark's processes from everything else that ran."
      : "";
  const summary: Table = {
    head: ["scenario", "goal", "result", "verdict"],
    left: 4,
    rows: sections.map((s) => [`[${s.title}](#${anchor(s.title)})`, s.goal ?? "—", s.headline, `**${s.verdict}**`]),
  };
  const rank = (id: string) => (GOAL_ORDER.includes(id) ? GOAL_ORDER.indexOf(id) : GOAL_ORDER.length);
  const goals = [...sections].sort((a, b) => rank(a.id) - rank(b.id)).flatMap((s) => s.goals ?? []);
  const analysisAt = "\u0000analysis\u0000";
  const body = [
    "# Benchmarks",
    "",
    `Generated by \`${info.command}\` (tests/bench/run.ts) on ${info.date}, in ${fmt(info.durationSeconds / 60, 1)} min. Rerun it to check any figure here.`,
    "",
    `- Machine: ${info.machine.cores} cores (${info.machine.cpu}), ${info.machine.memory} memory, Linux ${info.machine.kernel}`,
    `- Versions: devctl ${info.versions.devctl}, Bun ${info.versions.bun}, Kubernetes ${info.versions.kubernetes}${info.versions.peer ? `; Go peer: the seed's operator on ${info.versions.peer} (tests/bench/peers/controller-runtime)` : ""}`,
    `- devctl runs as \`devctl operator install\` deploys it: ${Object.entries(AS_INSTALLED_ENV)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")} (its default memory limit, ${DEFAULT_MEMORY.limit}; src/install/deployment.ts)`,
    `- Cluster: ${info.cluster}`,
    `- Load: ${shared}`,
    "",
    table(summary),
    "",
    ...(goals.length ? [table(goalsTable(goals)), ""] : []),
    analysisAt,
    "",
    ...sections.flatMap((s) => [
      `## ${s.title}`,
      "",
      ...(s.goal ? [`Goal: ${s.goal}. Verdict: **${s.verdict}**.`, ""] : []),
      ...s.tables.flatMap((t) => [table(t), ""]),
      ...(s.charts ?? []).flatMap((c) => [`![${c.alt.replace(/[[\]]/g, "")}](${c.file})`, ""]),
      ...s.notes.map((n) => `- ${n}`),
      "",
    ]),
  ].join("\n");
  const analysis = kept
    ? carryAnalysis(kept, (previous ?? "").replace(kept, ""), body)
    : `${ANALYSIS_START}\n_No analysis written yet._\n${ANALYSIS_END}`;
  return body.replace(analysisAt, analysis);
}

/** The chart files of all sections as [file name, SVG text], to be written beside the report. */
export function chartFiles(sections: readonly Section[]): [string, string][] {
  return sections.flatMap((s) => (s.charts ?? []).map((c): [string, string] => [c.file, c.svg]));
}

function anchor(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .trim()
    .replace(/ /g, "-");
}
