import { expect, test } from "bun:test";
import { escapeXml, lineChart, niceCeil, thin, ticks } from "./_svg.ts";

const polylines = (svg: string) =>
  [...svg.matchAll(/<polyline [^>]*data-name="([^"]*)"[^>]*points="([^"]*)"/g)].map((m) => ({
    name: m[1],
    points: (m[2] ?? "").split(" ").map((p) => p.split(",").map(Number) as [number, number]),
  }));

test("nice numbers round up to 1, 2, 2.5 or 5 times a power of ten", () => {
  expect([0.7, 1, 1.2, 2.2, 3, 7, 1000, 1001, 0].map(niceCeil)).toEqual([1, 1, 2, 2.5, 5, 10, 1000, 2000, 1]);
});

test("ticks run from 0 to the nice ceiling in 5 or 10 equal steps", () => {
  expect(ticks(1000)).toEqual([0, 200, 400, 600, 800, 1000]);
  expect(ticks(180)).toEqual([0, 20, 40, 60, 80, 100, 120, 140, 160, 180, 200]);
  expect(ticks(2.3)).toEqual([0, 0.5, 1, 1.5, 2, 2.5]);
});

test("every series becomes one polyline whose largest point touches the plot's top right corner", () => {
  const svg = lineChart({
    title: "t",
    xLabel: "x",
    yLabel: "y",
    width: 400,
    height: 200,
    series: [
      {
        name: "a",
        points: [
          [0, 0],
          [500, 1000],
        ],
      },
      {
        name: "b",
        points: [
          [0, 0],
          [250, 500],
        ],
      },
    ],
  });
  const lines = polylines(svg);
  expect(lines.map((l) => l.name)).toEqual(["a", "b"]);
  // plot: left 64, right 400-16, top 36, bottom 200-44; axes 0..500 and 0..1000
  expect(lines[0]?.points).toEqual([
    [64, 156],
    [384, 36],
  ]);
  expect(lines[1]?.points.at(-1)).toEqual([224, 96]);
  expect(svg.startsWith("<svg ")).toBe(true);
  expect(svg.trim().endsWith("</svg>")).toBe(true);
});

test("a step series holds its value until the next point", () => {
  const svg = lineChart({
    title: "t",
    xLabel: "x",
    yLabel: "y",
    width: 400,
    height: 200,
    series: [
      {
        name: "s",
        step: true,
        points: [
          [0, 0],
          [250, 500],
          [500, 1000],
        ],
      },
    ],
  });
  expect(polylines(svg)[0]?.points).toEqual([
    [64, 156],
    [224, 156],
    [224, 96],
    [384, 96],
    [384, 36],
  ]);
});

test("names and labels are escaped, and an empty series is in the legend without a line", () => {
  const svg = lineChart({ title: "a<b & c", xLabel: '"x"', yLabel: "y", series: [{ name: "d>e", points: [] }] });
  expect(svg).toContain("a&lt;b &amp; c");
  expect(svg).toContain("&quot;x&quot;");
  expect(svg).toContain(">d&gt;e</text>");
  expect(polylines(svg)).toHaveLength(0);
  expect(escapeXml(`<&>"`)).toBe("&lt;&amp;&gt;&quot;");
});

test("long series are thinned to the point budget, keeping first, last and the peak", () => {
  const points = Array.from({ length: 10_000 }, (_, i) => [i, i === 7777 ? 5000 : i % 100] as const);
  const kept = thin(points, 300);
  expect(kept.length).toBeLessThanOrEqual(300);
  expect(kept[0]).toEqual([0, 0]);
  expect(kept.at(-1)).toEqual([9999, 99]);
  expect(kept).toContainEqual([7777, 5000]);
  expect(thin(points.slice(0, 10), 300)).toHaveLength(10);
});

test("the same spec renders the same bytes", () => {
  const spec = {
    title: "t",
    xLabel: "x",
    yLabel: "y",
    series: [
      {
        name: "a",
        points: [
          [0, 1],
          [3, 7],
        ] as const,
      },
    ],
  };
  expect(lineChart(spec)).toBe(lineChart(spec));
});
