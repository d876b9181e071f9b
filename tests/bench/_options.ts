/**
 * Command-line options of `npm run bench` (tests/bench/run.ts). Pure.
 *
 * Properties:
 * - Defaults are the full run the issue asks for (N = 100 and 1,000, 3 repeats, 100 heal trials,
 *   10,000 WebApps for memory, 500 beside a CPU hog); --quick shrinks every size for a smoke run of a few minutes, and
 *   explicit flags win over both.
 * - --scenario takes names from SCENARIOS, comma-separated or repeated; unknown names and bad numbers
 *   are errors that say what is accepted.
 * - The report goes to BENCHMARKS.md at the repository root on a full run; a --quick or --warm run writes it only
 *   with --out (it always prints it): the figures there are from cold operators.
 */

export const SCENARIOS = [
  "convergence",
  "steady",
  "memory",
  "heal",
  "startup",
  "failover",
  "update",
  "production",
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface BenchOptions {
  quick: boolean;
  scenarios: ScenarioName[];
  /** Convergence sizes; the largest one also sizes the shared fixture (steady, startup, heal, update). */
  sizes: number[];
  /** WebApps for the large memory point. */
  memoryLarge: number;
  /** Let the operator create the large point's children itself (slow: ~10 min for 10,000 here). */
  memoryFromScratch: boolean;
  repeats: number;
  /** Repeats of the convergence sizes below the largest (at least `repeats`). */
  smallRepeats: number;
  /** WebApps of the busy-machine convergence (a CPU hog beside each operator); 0: not run. */
  busyN: number;
  healTrials: number;
  startups: number;
  failovers: number;
  /** The operator's --concurrency, and the floor client's parallelism. */
  concurrency: number;
  /** Parallel requests the bench uses to create or change WebApps. */
  clientConcurrency: number;
  profile: boolean;
  /**
   * Before each timed convergence, the same operator process converges as many WebApps in a second namespace
   * (untimed), so the timed burst runs on code the JS engine (or Go's runtime) has already warmed: what is left of
   * a gap is the operator's design, not its runtime's warm-up.
   */
  warm: boolean;
  /** Run the Go peer (the seed's controller-runtime operator) beside devctl wherever it applies. */
  peer: boolean;
  build: boolean;
  /** Where the report is written; undefined: only printed. */
  out?: string;
}

export const USAGE = `usage: npm run bench -- [options]   (or: bun run tests/bench/run.ts [options])
  --quick              small sizes, one repeat: a smoke run of a few minutes (prints the report; writes it only with --out)
  --scenario NAME      run only these (comma-separated or repeated): ${SCENARIOS.join(", ")}
  --n N                largest convergence size and size of the shared fixture (default 1000; --quick 100);
                       also the production-shaped convergence's
  --memory-n N         WebApps for the large memory point, seed- and production-shaped (default 10000; --quick 300)
  --memory-from-scratch  the operator creates the large point's Deployments and Services itself (slow; default: the bench pre-creates them)
  --repeats R          repeats per convergence and update measurement (default 3; --quick 1)
  --small-repeats R    repeats of the convergence sizes below the largest, at least --repeats (default 5; --quick 1):
                       their runs take seconds, so machine noise weighs more in each
  --busy-n N           WebApps of the convergence beside a CPU hog, devctl and the Go peer alternating (default 500, or the
                       largest --n if smaller; 0 without the peer; 0 leaves it out; 1000 is the issue's own setting, +4 min)
  --heal-trials T      heal trials (default 100; --quick 20)
  --concurrency C      operator --concurrency and floor parallelism (default 4, the operator's default)
  --profile            also run one convergence of N with devctl under bun --cpu-prof-md --heap-prof-md and summarise it
  --warm               each operator first converges as many WebApps in a second namespace, untimed: the timed
                       convergences then show the operators with their code warmed up (not for BENCHMARKS.md)
  --peer, --no-peer    run the Go peer (the seed's controller-runtime operator) beside devctl (default: --peer)
  --no-build           use dist/devctl as it is (default: npm run build first)
  --out FILE           where to write the report (default BENCHMARKS.md at the repository root; none with --quick)`;

export class OptionsError extends Error {}

/** The default size of the busy-machine convergence (see parseOptions). */
export const BUSY_DEFAULT_N = 500;

export function parseOptions(argv: readonly string[], repoRoot: string): BenchOptions {
  const quick = argv.includes("--quick");
  const o: BenchOptions = {
    quick,
    scenarios: [],
    sizes: quick ? [20, 100] : [100, 1000],
    memoryLarge: quick ? 300 : 10_000,
    memoryFromScratch: false,
    repeats: quick ? 1 : 3,
    smallRepeats: quick ? 1 : 5,
    busyN: -1,
    healTrials: quick ? 20 : 100,
    startups: quick ? 2 : 5,
    failovers: quick ? 1 : 3,
    concurrency: 4,
    clientConcurrency: 16,
    profile: false,
    warm: false,
    peer: true,
    build: true,
    ...(quick ? {} : { out: `${repoRoot}/BENCHMARKS.md` }),
  };
  let outGiven = false;
  const int = (flag: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min)
      throw new OptionsError(
        `${flag} needs a whole number >= ${min} (got ${v === undefined ? "nothing" : JSON.stringify(v)})`,
      );
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const [flag, inline] = a.includes("=") ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a, undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case "--quick":
        break;
      case "--scenario":
      case "--scenarios":
        for (const name of (value() ?? "")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)) {
          if (!(SCENARIOS as readonly string[]).includes(name))
            throw new OptionsError(`unknown scenario "${name}": choose from ${SCENARIOS.join(", ")}`);
          if (!o.scenarios.includes(name as ScenarioName)) o.scenarios.push(name as ScenarioName);
        }
        break;
      case "--n": {
        const n = int("--n", value(), 2);
        o.sizes = n > 100 ? [100, n] : [n];
        break;
      }
      case "--memory-n":
        o.memoryLarge = int("--memory-n", value(), 1);
        break;
      case "--memory-from-scratch":
        o.memoryFromScratch = true;
        break;
      case "--repeats":
        o.repeats = int("--repeats", value(), 1);
        break;
      case "--small-repeats":
        o.smallRepeats = int("--small-repeats", value(), 1);
        break;
      case "--busy-n":
        o.busyN = int("--busy-n", value(), 0);
        break;
      case "--heal-trials":
        o.healTrials = int("--heal-trials", value(), 1);
        break;
      case "--concurrency":
        o.concurrency = int("--concurrency", value(), 1);
        break;
      case "--profile":
        o.profile = true;
        break;
      case "--warm":
        o.warm = true;
        break;
      case "--peer":
        o.peer = true;
        break;
      case "--no-peer":
        o.peer = false;
        break;
      case "--no-build":
        o.build = false;
        break;
      case "--out":
        outGiven = true;
        o.out = value();
        if (!o.out) throw new OptionsError("--out needs a file name");
        break;
      case "--help":
      case "-h":
        throw new OptionsError(USAGE);
      default:
        throw new OptionsError(`unknown option "${a}"\n${USAGE}`);
    }
  }
  if (o.scenarios.length === 0) o.scenarios = [...SCENARIOS];
  if (o.warm && !outGiven) delete o.out;
  // 500, not 1,000: three pairs at 1,000 beside a hog take ~9 min, at 500 ~5 (each run still lasts ~40 s),
  // which keeps the whole default run within ~45 min on 2 cores (see the estimate in run.ts).
  if (o.busyN < 0) o.busyN = o.peer ? Math.min(BUSY_DEFAULT_N, Math.max(...o.sizes)) : 0;
  return o;
}

/** The size of the shared fixture: the largest convergence size. */
export const fixtureSize = (o: BenchOptions): number => Math.max(...o.sizes);
