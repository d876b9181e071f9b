/**
 * Runs a scenario once per operator under test (devctl, then the Go peer unless --no-peer) and joins
 * the two sections into one: devctl's verdict and headline, a "devctl / Go" table over the figures
 * both reported, then devctl's tables and the peer's (captions prefixed with "Go peer:").
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

export function join(devctl: Section, peer: Section): Section {
  const goals = goalsOf(devctl.figures ?? [], peer.figures ?? []);
  const prefixed = peer.tables.map((t) => ({ ...t, caption: `${IMPL_LABEL.peer}: ${t.caption ?? ""}`.trim() }));
  return {
    ...devctl,
    tables: [ratioTable(devctl.figures ?? [], peer.figures ?? []), ...devctl.tables, ...prefixed],
    goals,
    // A scenario with no goal of its own is judged by its comparison with the peer.
    verdict: devctl.verdict === "no goal" && goals.length > 0 ? overall(goals) : devctl.verdict,
    // The peer's own notes describe devctl's code paths; only the comparison note is added.
    notes: [
      ...devctl.notes,
      "The Go peer ran right after devctl, over the same converged WebApps (converged by devctl); its own status writes on its first pass are part of what it costs.",
    ],
    ...(devctl.failed || peer.failed ? { failed: true } : {}),
  };
}

/** Runs `scenario` for devctl and, when the peer is compared, for the Go peer; one joined section. */
export async function compared(ctx: Context, scenario: (ctx: Context) => Promise<Section>): Promise<Section> {
  if (!ctx.impls.includes("peer")) {
    const alone = await scenario(ctx);
    return { ...alone, goals: goalsOf(alone.figures ?? []) };
  }
  await ensureFixture(ctx);
  const devctl = await scenario(forImpl(ctx, "devctl"));
  await ctx.stopOperators();
  ctx.log(`  now the same with the ${IMPL_LABEL.peer}`);
  const peer = await scenario(forImpl(ctx, "peer"));
  return join(devctl, peer);
}
