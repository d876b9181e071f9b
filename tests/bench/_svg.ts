/**
 * Line charts as standalone SVG text, for the report (convergence curves, RSS over time). Pure.
 *
 * Properties:
 * - lineChart(spec) draws every series as one <polyline> (class "series", data-name = its name) on
 *   shared axes: x from 0 to the largest x of all series, y from 0 to the largest
 *   y, both rounded up to a "nice" number (1, 2, 2.5 or 5 × 10^k); 5 or 10 ticks per axis, labelled with
 *   the spec's formatters; a legend names each series in its colour.
 * - `step: true` draws a series as a step function (a count that jumps at events, e.g. WebApps
 *   Available); otherwise points are joined straight.
 * - Series with more than `maxPoints` points (default 400) are thinned to at most that many, always
 *   keeping the first and the last point and each bucket's lowest and highest, so the file stays
 *   small and the shape (the end of a curve, a peak) stays exact.
 * - Text is XML-escaped; an empty series is listed in the legend and draws nothing; a chart with no
 *   point at all still renders its axes (0–1).
 * - Deterministic: the same spec gives the same bytes (numbers rounded to 0.1 px).
 */

export interface Series {
  name: string;
  points: readonly (readonly [number, number])[];
  /** CSS colour; defaults to the palette in order. */
  color?: string;
  step?: boolean;
  dashed?: boolean;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  width?: number;
  height?: number;
  formatX?: (v: number) => string;
  formatY?: (v: number) => string;
  maxPoints?: number;
}

export const PALETTE = ["#1f6feb", "#d1242f", "#6e7781", "#1a7f37", "#8250df", "#bf8700"] as const;

const MARGIN = { top: 36, right: 16, bottom: 44, left: 64 };

export function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The smallest "nice" number (1, 2, 2.5, 5 × 10^k) that is >= v; 1 for v <= 0. */
export function niceCeil(v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v * (1 - 1e-12)) return m * p;
  return 10 * p;
}

/** Tick values from 0 to niceCeil(max) in 5 equal steps when a fifth is nice, else 10. */
export function ticks(max: number): number[] {
  const top = niceCeil(max);
  const parts = Math.abs(niceCeil(top / 5) - top / 5) < 1e-9 * top ? 5 : 10;
  return Array.from({ length: parts + 1 }, (_, i) => Number(((i * top) / parts).toPrecision(12)));
}

/** At most `max` points: per bucket of x the first, the lowest and the highest; first and last always kept. */
export function thin(points: readonly (readonly [number, number])[], max: number): [number, number][] {
  if (points.length <= max) return points.map(([x, y]) => [x, y]);
  const buckets = Math.max(1, Math.floor((max - 2) / 3));
  const size = (points.length - 2) / buckets;
  const keep = new Set<number>([0, points.length - 1]);
  for (let b = 0; b < buckets; b++) {
    const from = 1 + Math.floor(b * size);
    const to = Math.min(points.length - 1, 1 + Math.floor((b + 1) * size));
    if (from >= to) continue;
    let lo = from;
    let hi = from;
    for (let i = from; i < to; i++) {
      if ((points[i]?.[1] ?? 0) < (points[lo]?.[1] ?? 0)) lo = i;
      if ((points[i]?.[1] ?? 0) > (points[hi]?.[1] ?? 0)) hi = i;
    }
    keep.add(from).add(lo).add(hi);
  }
  return [...keep].sort((a, b) => a - b).map((i) => [points[i]?.[0] ?? 0, points[i]?.[1] ?? 0]);
}

const r1 = (v: number) => String(Math.round(v * 10) / 10);

export function lineChart(spec: ChartSpec): string {
  const width = spec.width ?? 720;
  const height = spec.height ?? 360;
  const fx = spec.formatX ?? ((v) => String(v));
  const fy = spec.formatY ?? ((v) => String(v));
  const all = spec.series.flatMap((s) => s.points);
  const xTicks = ticks(Math.max(0, ...all.map((p) => p[0])));
  const yTicks = ticks(Math.max(0, ...all.map((p) => p[1])));
  const xMax = xTicks.at(-1) ?? 1;
  const yMax = yTicks.at(-1) ?? 1;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const px = (x: number) => MARGIN.left + (x / xMax) * plotW;
  const py = (y: number) => MARGIN.top + plotH - (y / yMax) * plotH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(spec.title)}</text>`,
  ];
  for (const t of yTicks) {
    const y = r1(py(t));
    out.push(
      `<line x1="${MARGIN.left}" y1="${y}" x2="${width - MARGIN.right}" y2="${y}" stroke="#d0d7de" stroke-width="1"/>`,
      `<text x="${MARGIN.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${escapeXml(fy(t))}</text>`,
    );
  }
  for (const t of xTicks) {
    const x = r1(px(t));
    out.push(
      `<line x1="${x}" y1="${MARGIN.top + plotH}" x2="${x}" y2="${MARGIN.top + plotH + 4}" stroke="#57606a"/>`,
      `<text x="${x}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${escapeXml(fx(t))}</text>`,
    );
  }
  out.push(
    `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${width - MARGIN.right}" y2="${MARGIN.top + plotH}" stroke="#57606a"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${height - 6}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`,
    `<text transform="translate(14 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(spec.yLabel)}</text>`,
  );
  spec.series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length];
    const pts = thin(s.points, spec.maxPoints ?? 400);
    const coords: string[] = [];
    pts.forEach(([x, y], j) => {
      const prev = pts[j - 1];
      if (s.step && prev) coords.push(`${r1(px(x))},${r1(py(prev[1]))}`);
      coords.push(`${r1(px(x))},${r1(py(y))}`);
    });
    if (coords.length > 0)
      out.push(
        `<polyline class="series" data-name="${escapeXml(s.name)}" fill="none" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ""} points="${coords.join(" ")}"/>`,
      );
    const ly = MARGIN.top + 6 + i * 16;
    const lx = MARGIN.left + 10;
    out.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 18}" y2="${ly}" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ""}/>`,
      `<text x="${lx + 24}" y="${ly}" dominant-baseline="middle">${escapeXml(s.name)}</text>`,
    );
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
