/**
 * Kubernetes resource quantities ("500m", "1.5Gi") as the API server reads and writes them. Pure.
 *
 * Properties:
 * - QUANTITY accepts a subset of what the API server accepts: digits with an optional fraction and an optional
 *   decimal (n u m k M G T P E) or binary (Ki Mi Gi Ti Pi Ei) suffix; no sign, no exponent ("1e3"), no leading
 *   zeros. Every text it accepts parses in the API server and in CEL's quantity() alike.
 * - canonicalQuantity(q) is the text the API server stores and returns for q: resource.Quantity's String() after
 *   ParseQuantity, ported from k8s.io/apimachinery v0.36 (pkg/api/resource/quantity.go), quirks included: the
 *   input is kept as typed when ParseQuantity takes it for canonical ("1.500" stays "1.500"), a binary amount that
 *   is below 1024 or not whole is written in decimal ("0.5Ki" → "512", "1.1Mi" → "1153433600m"), and amounts are
 *   rounded up to 1n. quantity.test.ts holds a table recorded from the Go code.
 * - compareQuantities compares amounts exactly (nano-units as BigInt), as CEL's compareTo and the API server's
 *   requests-within-limits check do.
 */

/** The quantities devctl accepts; see the module doc. */
export const QUANTITY = /^(0|[1-9][0-9]*)(\.[0-9]+)?([KMGTPE]i|[numkMGTPE])?$/;

type Format = "DecimalSI" | "BinarySI";

interface Parsed {
  /** The integer digits, "0" when there are none but zeros. */
  num: string;
  /** The fraction digits, "" when there are none. */
  denom: string;
  base: 2n | 10n;
  exponent: number;
  format: Format;
}

const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIX = new Map(Object.entries(DECIMAL).map(([s, e]) => [e, s]));
const BINARY_SUFFIX = new Map(Object.entries(BINARY).map(([s, e]) => [e / 10, s]));
const NANO = 1_000_000_000n;
const INT64_MAX = 2n ** 63n - 1n;
/** ParseQuantity caps a binary amount at the largest int64 (in units): 8Ei and above read as 9223372036854775807. */
const MAX_BINARY = INT64_MAX * NANO;

function parse(q: string): Parsed | undefined {
  const m = QUANTITY.exec(q);
  if (!m) return undefined;
  const [, num = "0", fraction, suffix = ""] = m;
  const denom = fraction ? fraction.slice(1) : "";
  if (suffix in BINARY) return { num, denom, base: 2n, exponent: BINARY[suffix] as number, format: "BinarySI" };
  return { num, denom, base: 10n, exponent: DECIMAL[suffix] as number, format: "DecimalSI" };
}

export const isQuantity = (q: string): boolean => parse(q) !== undefined;

/** The amount of q ("512Mi", "1.5Gi", "500M", "1048576"; blanks around it ignored); undefined if not a quantity. */
export function quantityValue(q: string): number | undefined {
  const p = parse(q.trim());
  return p && Number(nanos(p)) / 1e9;
}

/** The amount in nano-units, rounded up as ParseQuantity rounds (to 1n). */
function nanos(p: Parsed): bigint {
  const digits = BigInt(p.num + p.denom);
  const scale = 10n ** BigInt(p.denom.length);
  const numerator = digits * p.base ** BigInt(Math.max(p.exponent, 0)) * NANO;
  const denominator = scale * (p.exponent < 0 ? 10n ** BigInt(-p.exponent) : 1n);
  return (numerator + denominator - 1n) / denominator;
}

/**
 * ParseQuantity's fast path keeps the text it was given, unchanged, when its test says it is canonical (digits
 * without "000" at the end nor a leading zero and a scale that is a multiple of 3; for a binary suffix, a whole
 * number that is not a multiple of 8). Its precision guards decide whether the fast path is taken at all.
 */
function keepsText(p: Parsed): boolean {
  if (p.format === "DecimalSI") {
    const precision = 18 - (p.num.length + p.denom.length);
    const scale = p.exponent - p.denom.length;
    if (precision < 0 || scale < -9) return false;
    const shifted = p.num + p.denom;
    return scale % 3 === 0 && !shifted.endsWith("000") && shifted[0] !== "0";
  }
  if (p.denom !== "") return false;
  const precision = 15 - p.num.length - Math.trunc((p.exponent * 3) / 10) - 1;
  if (precision < 0) return false;
  const value = BigInt(p.num);
  if (value << BigInt(p.exponent) > INT64_MAX) return false;
  return p.exponent % 10 === 0 && (value & 7n) !== 0n;
}

/** The text the API server stores for q (see the module doc); throws on text QUANTITY does not accept. */
export function canonicalQuantity(q: string): string {
  const p = parse(q);
  if (!p) throw new Error(`not a quantity: ${JSON.stringify(q)}`);
  if (q === "0") return q;
  if (keepsText(p)) return q;
  const amount = p.format === "BinarySI" && nanos(p) > MAX_BINARY ? MAX_BINARY : nanos(p);
  if (amount === 0n) return "0";
  if (p.format === "BinarySI" && amount >= 1024n * NANO && amount % NANO === 0n) {
    let n = amount / NANO;
    let e = 0;
    while (n % 1024n === 0n) {
      n /= 1024n;
      e++;
    }
    return `${n}${BINARY_SUFFIX.get(e) ?? ""}`;
  }
  let mantissa = amount;
  let e = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    e++;
  }
  while (e % 3 !== 0) {
    mantissa *= 10n;
    e--;
  }
  return `${mantissa}${DECIMAL_SUFFIX.get(e) ?? ""}`;
}

/** Negative, zero or positive as a is below, equal to or above b; throws on text QUANTITY does not accept. */
export function compareQuantities(a: string, b: string): number {
  const [x, y] = [parse(a), parse(b)];
  if (!x || !y) throw new Error(`not a quantity: ${JSON.stringify(x ? b : a)}`);
  const [m, n] = [nanos(x), nanos(y)];
  return m < n ? -1 : m > n ? 1 : 0;
}
