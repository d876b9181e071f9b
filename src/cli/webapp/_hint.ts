/**
 * A 404 that names no object means the API itself is missing: the WebApp CRD is not installed.
 * Such an error gets a hint saying what to do; every other error passes through unchanged.
 */
import { KubeError } from "../../kube/errors.ts";

export function withCrdHint(e: unknown): unknown {
  if (e instanceof KubeError && e.reason === "NotFound" && !e.status?.details?.name) {
    return new Error(
      `${e.message}: the WebApp CRD is not installed in this cluster; install it with \`devctl operator install\``,
      { cause: e },
    );
  }
  return e;
}
