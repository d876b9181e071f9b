/**
 * The dashboard as a picture for README (docs/dashboard.svg): every panel of src/install/dashboard.ts drawn as a line
 * chart (tests/bench/_svg.ts) from its own queries' range results, in the dashboard's two-column grid. Pure.
 */
import type { Panel } from "../../src/install/dashboard.ts";
import { escapeXml, lineChart, type Series } from "../bench/_svg.ts";

export interface PanelData {
  panel: Panel;
  /** Per target, the range query's series: legend text and [seconds from the start, value] points. */
  series: Series[];
}

const W = 560;
const H = 240;
const UNIT: Record<Panel["unit"], (v: number) => string> = {
  short: (v) => String(Math.round(v * 100) / 100),
  s: (v) => `${Math.round(v * 1000) / 1000} s`,
  bytes: (v) => `${Math.round(v / 2 ** 20)} MiB`,
  reqps: (v) => `${Math.round(v * 100) / 100}/s`,
  percentunit: (v) => `${Math.round(v * 100)}%`,
};

export function dashboardSvg(title: string, panels: readonly PanelData[]): string {
  const rows = Math.ceil(panels.length / 2);
  const width = 2 * W;
  const height = 40 + rows * H;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="12" y="26" font-size="18" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  panels.forEach((p, i) => {
    const chart = lineChart({
      title: p.panel.title,
      xLabel: "seconds",
      yLabel: "",
      series: p.series,
      width: W,
      height: H,
      formatY: UNIT[p.panel.unit],
    });
    const x = (i % 2) * W;
    const y = 40 + Math.floor(i / 2) * H;
    out.push(chart.replace("<svg ", `<svg x="${x}" y="${y}" `));
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

/** A legend like Grafana's: `{{label}}` replaced by the series' label values. */
export function legendOf(format: string, metric: Record<string, string>): string {
  return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => metric[name] ?? "");
}
