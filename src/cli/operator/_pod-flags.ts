/**
 * Parsing of install's pod flags: --node-selector, --toleration, --image-pull-policy, --image-pull-secret.
 *
 * Properties:
 * - Each list flag takes comma-separated items (kubectl's `-l a=b,c=d` style); an array (a repeated
 *   flag, where the parser gives one) is the same as its items joined.
 * - Every key, value, effect and name is checked against the API server's own rules, so a bad value is
 *   a UsageError naming the flag and the item before anything is sent (exit 2).
 * - Tolerations use kubectl taint's syntax: `key=value:Effect`, `key:Effect`, `key=value`, `key`
 *   (no value means operator Exists; no effect means every effect).
 */
import { isDnsSubdomain, labelKeyProblem, labelValueProblem } from "../../api/name-rules.ts";
import { IMAGE_PULL_POLICIES, type ImagePullPolicy } from "../../api/webapp.ts";
import type { Toleration } from "../../install/deployment.ts";
import { quantityValue } from "../../api/quantity.ts";
import { UsageError } from "../_errors.ts";

const EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"] as const;

type ListFlag = string | string[] | undefined;

function items(value: ListFlag): string[] {
  return [value ?? []]
    .flat()
    .join(",")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export function parseNodeSelector(value: ListFlag): Record<string, string> | undefined {
  const list = items(value);
  if (!list.length) return undefined;
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf("=");
    if (eq < 0) throw new UsageError(`--node-selector "${item}" must be key=value, e.g. kubernetes.io/os=linux`);
    const [key, val] = [item.slice(0, eq), item.slice(eq + 1)];
    const problem = labelKeyProblem(key) ?? labelValueProblem(val);
    if (problem) throw new UsageError(`--node-selector "${item}" is invalid: ${problem}`);
    out[key] = val;
  }
  return out;
}

export function parseTolerations(value: ListFlag): Toleration[] | undefined {
  const list = items(value);
  if (!list.length) return undefined;
  return list.map((item) => {
    const colon = item.lastIndexOf(":");
    const effect = colon >= 0 ? item.slice(colon + 1) : undefined;
    const kv = colon >= 0 ? item.slice(0, colon) : item;
    const eq = kv.indexOf("=");
    const key = eq >= 0 ? kv.slice(0, eq) : kv;
    const val = eq >= 0 ? kv.slice(eq + 1) : undefined;
    const usage = "use key=value:Effect, key:Effect, key=value or key, e.g. dedicated=operators:NoSchedule";
    if (effect !== undefined && !(EFFECTS as readonly string[]).includes(effect))
      throw new UsageError(
        `--toleration "${item}" is invalid: the effect must be one of ${EFFECTS.join(", ")}; ${usage}`,
      );
    const problem = labelKeyProblem(key) ?? (val !== undefined ? labelValueProblem(val) : undefined);
    if (problem) throw new UsageError(`--toleration "${item}" is invalid: ${problem}; ${usage}`);
    return {
      key,
      ...(val !== undefined ? { operator: "Equal" as const, value: val } : { operator: "Exists" as const }),
      ...(effect ? { effect: effect as Toleration["effect"] & string } : {}),
    };
  });
}

export function parsePullPolicy(value: string | undefined): ImagePullPolicy | undefined {
  if (value === undefined || value === "") return undefined;
  if (!(IMAGE_PULL_POLICIES as readonly string[]).includes(value))
    throw new UsageError(`--image-pull-policy "${value}" must be one of: ${IMAGE_PULL_POLICIES.join(", ")}`);
  return value as ImagePullPolicy;
}

/** A memory quantity flag ("512Mi", "1Gi"). */
export function parseMemoryQuantity(value: string, flag: string): string {
  if (quantityValue(value) === undefined)
    throw new UsageError(`${flag} "${value}" is not a memory quantity such as 256Mi, 512Mi or 1Gi`);
  return value.trim();
}

export function parsePullSecrets(value: ListFlag): string[] | undefined {
  const list = items(value);
  if (!list.length) return undefined;
  for (const name of list) {
    if (!isDnsSubdomain(name))
      throw new UsageError(
        `--image-pull-secret "${name}" is not a Secret name (lower-case letters, digits, '-' and '.', at most 253 characters)`,
      );
  }
  return [...new Set(list)];
}
