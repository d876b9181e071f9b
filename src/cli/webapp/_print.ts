/**
 * WebApps printed as `kubectl get webapps` prints them, for every -o format, once or as a watch.
 * - The output flag is checked when read (an unknown format or a broken JSONPath template is a usage error).
 * - managedFields are left out of yaml and json, as kubectl does by default.
 * - --watch prints the current state, then one row (or document) per change until interrupted; a
 *   closed watch is reopened from the last resourceVersion, an expired one (410) from a fresh list.
 */
import { SINGULAR, WEBAPP_RESOURCE, type WebAppObject } from "../../api/webapp.ts";
import { toYaml } from "../../api/yaml.ts";
import { isGone } from "../../kube/errors.ts";
import type { KubeClient, KubeObject } from "../../kube/types.ts";
import { formatTable } from "../../printers/format.ts";
import { runJsonPath } from "../../printers/jsonpath.ts";
import { asList, type Output, OUTPUT_FORMATS, parseOutput, qualifiedName } from "../../printers/output.ts";
import { UsageError } from "../_errors.ts";
import { typed } from "../_flags.ts";
import { webAppHeader, webAppRows, webAppTable } from "./_table.ts";
import { withCrdHint } from "./_hint.ts";

export type WebApp = KubeObject & WebAppObject;

export function readOutput(value: string, flag: string): Output {
  try {
    return parseOutput(value);
  } catch (e) {
    throw new UsageError(`${flag} "${value}" ${(e as Error).message}`);
  }
}

export const outputArg = typed(
  {
    type: "string",
    alias: "o",
    valueHint: "format",
    default: "table",
    description: `Output format: ${OUTPUT_FORMATS.join(", ")}`,
  },
  readOutput,
);

export const watchArg = {
  type: "boolean",
  alias: "w",
  description: "After printing, watch for changes and print each one",
} as const;

const shown = (w: WebApp): WebApp => {
  const { managedFields: _, ...metadata } = w.metadata;
  return { ...w, metadata };
};

export interface PrintOptions {
  output: Output;
  withNamespace: boolean;
  /** One object (get) rather than a list. */
  single: boolean;
  now: number;
}

/** The text for `items` in the chosen format (ends with a newline unless it is empty or jsonpath). */
export function render(items: readonly WebApp[], o: PrintOptions): string {
  const objs = items.map(shown);
  const whole = o.single ? objs[0] : asList(objs);
  switch (o.output.kind) {
    case "table":
    case "wide":
      return objs.length ? `${webAppTable(objs, o.now, o.withNamespace, o.output.kind === "wide")}\n` : "";
    case "name":
      return objs.map((w) => `${qualifiedName(SINGULAR, WEBAPP_RESOURCE.group, w)}\n`).join("");
    case "yaml":
      return toYaml(whole);
    case "json":
      return `${JSON.stringify(whole, null, 4)}\n`;
    case "jsonpath":
      return runJsonPath(o.output.template, whole);
  }
}

/** One watch event as kubectl get -w prints it: a table row (no header), a name, or a whole document. */
export function renderChange(w: WebApp, o: PrintOptions, widths: string[]): string {
  switch (o.output.kind) {
    case "table":
    case "wide": {
      const header = webAppHeader(o.withNamespace, o.output.kind === "wide");
      const row = webAppRows([w], o.now, o.withNamespace, o.output.kind === "wide")[0] as string[];
      // Pad to the widths of the first table so that rows stay under their headings.
      const lines = formatTable([widths.length ? widths : header, row]).split("\n");
      return `${lines[1]}\n`;
    }
    case "yaml":
      return `---\n${toYaml(shown(w))}`;
    case "jsonpath":
      return runJsonPath(o.output.template, shown(w));
    default:
      return render([w], { ...o, single: true });
  }
}

export interface WatchTarget {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Lists, prints, then prints every change until `signal` aborts. */
export async function printAndWatch(
  client: KubeClient,
  target: WatchTarget,
  o: PrintOptions,
  signal: AbortSignal,
  write: (s: string) => void,
): Promise<void> {
  let rv = "";
  const list = async () => {
    const l = await client.listAll<WebApp>(WEBAPP_RESOURCE, target).catch((e) => {
      throw withCrdHint(e);
    });
    rv = l.metadata?.resourceVersion ?? "";
    return l.items;
  };
  const first = await list();
  write(render(first, { ...o, now: Date.now() }));
  // The widest cell of each column so far, kept as a row of blanks for later rows to align with.
  const header = webAppHeader(o.withNamespace, o.output.kind === "wide");
  const widths = header.map((h, i) =>
    " ".repeat(
      Math.max(
        h.length,
        ...webAppRows(first, o.now, o.withNamespace, o.output.kind === "wide").map((r) => (r[i] ?? "").length),
      ),
    ),
  );
  while (!signal.aborted) {
    try {
      const events = await client.watch<WebApp>(WEBAPP_RESOURCE, { ...target, resourceVersion: rv, signal });
      for await (const ev of events) {
        if (ev.type === "BOOKMARK") continue;
        if (ev.type === "ERROR") {
          await list(); // the resourceVersion expired: start over from a fresh list
          break;
        }
        rv = ev.object.metadata.resourceVersion ?? rv;
        write(renderChange(ev.object, { ...o, now: Date.now() }, widths));
      }
    } catch (e) {
      if (signal.aborted) return;
      if (!isGone(e)) throw withCrdHint(e);
      await list();
    }
  }
}
