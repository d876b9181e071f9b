/**
 * Runs a scenario for each operator under test (devctl, and the Go peer unless --no-peer) and joins
 * the two sections into one: devctl's verdict and headline, a "devctl / Go" table over the figures
 * both reported, then devctl's tables and the peer's (captions prefixed with "Go peer:").
 * compared() runs it whole, devctl first; alternated() runs a scenario made of parts (Parted), the operators
 * taking turns part by part in the order devctl, peer, peer, devctl, devctl, ... so that neither always goes
 * first (the machine and the cluster drift during a scenario: its first trials after the fixture was made run
 * on a busier controller-manager than its last).
 *
 * Properties:
 * - The scenario sees a context whose ctx.operator() starts the chosen operator by default and whose
 *   ctx.impls is just that one; everything else (kube, fixture, leftovers) is the shared context, so a
 *   fixture made for devctl is the one the peer then works on.
 * - The shared fixture is ensured first, by devctl, so the peer never converges it.
 * - The floor is measured in devctl's pass only (ctx.measuresFloor): it does not depend on the operator.
 * - A ratio is devctl's figure over the peer's; "n/a" where either is missing. Pure apart from the runs.
 * - Figures that carry a goal become the section's goals (goalsOf), also without the peer ("not measured"
 *   for a ratio goal, devctl's own value for a value goal).
 */
import type { Context, Figure, Section, Table } from "./_context.ts";
import { ensureFixture } from "./_fixture.ts";
import { type Goal, goal, overall } from "./_goals.ts";
import { IMPL_LABEL, type OperatorImpl } from "./_operator.ts";
import { fmt } from "./_stats.ts";

/** `ctx` with `impl` as the default operator and the only one compared. */
export function forImpl(ctx: Context, impl: OperatorImpl): Context {
  return new Proxy(ctx, {
    get(target, key, receiver) {
      if (key === "impls") return [impl];
      // The floor does not depend on the operator: measured in devctl's pass only, which saves minutes.
      if (key === "measuresFloor") return impl === "devctl";
      if (key === "operator")
        return (ns: string, args?: string[], how: { impl?: OperatorImpl; profileDir?: string } = {}) =>
          target.operator(ns, args, { impl, ...how });
      return Reflect.get(target, key, receiver);
    },
  });
}

/** The "figure | devctl | Go peer | devctl / Go" table. */
export function ratioTable(devctl: readonly Figure[], peer: readonly Figure[]): Table {
  const rows = devctl.map((d) => {
    const p = peer.find((f) => f.name === d.name);
    return [
      d.name,
      d.show(d.value),
      p ? p.show(p.value) : "n/a",
      p && p.value !== 0 ? `**${fmt(d.value / p.value, 2)}**` : p && d.value === 0 ? "0 / 0" : "n/a",
    ];
  });
  return {
    caption: "devctl beside the Go peer (the seed's controller-runtime operator), same fixture, same concurrency:",
    head: ["figure", IMPL_LABEL.devctl, IMPL_LABEL.peer, "devctl / Go"],
    rows,
  };
}

/** The goals among devctl's figures, each beside the peer's figure of the same name (if any). */
export function goalsOf(devctl: readonly Figure[], peer: readonly Figure[] = []): Goal[] {
  return devctl.flatMap((d) =>
    d.goal ? [goal(d.goal, d.value, peer.find((f) => f.name === d.name)?.value, d.show)] : [],
  );
}

/** How the two operators' runs were ordered, in the words of the joined section's note. */
const ORDER_NOTE = {
  whole:
    "The Go peer ran right after devctl, over the same converged WebApps (converged by devctl); its own status writes on its first pass are part of what it costs.",
  alternated:
    "The two operators took turns over the same converged WebApps (converged by devctl), part by part in the order devctl, Go peer, Go peer, devctl, ..., each part with a newly started operator whose first pass had ended (the Go peer's status writes on that pass are not counted).",
} as const;

export function join(devctl: Section, peer: Section, order: keyof typeof ORDER_NOTE = "whole"): Section {
  const goals = goalsOf(devctl.figures ?? [], peer.figures ?? []);
  const prefixed = peer.tables.map((t) => ({ ...t, caption: `${IMPL_LABEL.peer}: ${t.caption ?? ""}`.trim() }));
  return {
    ...devctl,
    tables: [ratioTable(devctl.figures ?? [], peer.figures ?? []), ...devctl.tables, ...prefixed],
    goals,
    // A scenario with no goal of its own is judged by its comparison with the peer.
    verdict: devctl.verdict === "no goal" && goals.length > 0 ? overall(goals) : devctl.verdict,
    // The peer's own notes describe devctl's code paths; only the comparison note is added.
    notes: [...devctl.notes, ORDER_NOTE[order]],
    ...(devctl.failed || peer.failed ? { failed: true } : {}),
  };
}

/** devctl's section alone, its goals judged without a peer (a ratio goal is "not measured"). */
function alone(section: Section): Section {
  return { ...section, goals: goalsOf(section.figures ?? []) };
}

/** Runs `scenario` for devctl and, when the peer is compared, for the Go peer; one joined section. */
export async function compared(ctx: Context, scenario: (ctx: Context) => Promise<Section>): Promise<Section> {
  if (!ctx.impls.includes("peer")) return alone(await scenario(ctx));
  await ensureFixture(ctx);
  const devctl = await scenario(forImpl(ctx, "devctl"));
  await ctx.stopOperators();
  ctx.log(`  now the same with the ${IMPL_LABEL.peer}`);
  const peer = await scenario(forImpl(ctx, "peer"));
  return join(devctl, peer);
}

/**
 * A scenario measured in parts: measure() runs part `part` of `parts` for ctx's operator (started and stopped
 * within it) and adds its samples to `into`; report() makes one operator's section from all its samples.
 */
export interface Parted<S> {
  parts(ctx: Context): number;
  empty(): S;
  measure(ctx: Context, part: number, into: S): Promise<void>;
  report(ctx: Context, samples: S): Section;
}

/** Who goes first in part `part`: the first operator in even parts, the last in odd ones (A B, B A, A B, ...). */
export function turnOrder(impls: readonly OperatorImpl[], part: number): OperatorImpl[] {
  return part % 2 === 0 ? [...impls] : [...impls].reverse();
}

/** Runs `scenario` part by part, the operators taking turns (turnOrder); one joined section. */
export async function alternated<S>(ctx: Context, scenario: Parted<S>): Promise<Section> {
  await ensureFixture(ctx);
  const samples = new Map(ctx.impls.map((impl) => [impl, scenario.empty()] as const));
  const parts = scenario.parts(ctx);
  for (let part = 0; part < parts; part++)
    for (const impl of turnOrder(ctx.impls, part)) {
      if (ctx.impls.length > 1) ctx.log(`  part ${part + 1}/${parts}: ${IMPL_LABEL[impl]}`);
      try {
        await scenario.measure(forImpl(ctx, impl), part, samples.get(impl) as S);
      } finally {
        await ctx.stopOperators();
      }
    }
  const [devctl, peer] = ctx.impls.map((impl) => scenario.report(forImpl(ctx, impl), samples.get(impl) as S));
  return peer ? join(devctl as Section, peer, "alternated") : alone(devctl as Section);
}
