/** The wording of the schemas' messages, shared by webapp.ts and pod-template.ts: "must be at least 1 (got 0)". */
export const atLeast = (n: number) => (i: { input: unknown }) => `must be at least ${n} (got ${String(i.input)})`;
export const atMost = (n: number) => (i: { input: unknown }) => `must be at most ${n} (got ${String(i.input)})`;
export const wholeNumber = (i: { input: unknown }) => `must be a whole number (got ${String(i.input)})`;
/** "at most 64 items (got 70)" for lists and maps. */
export const atMostItems = (n: number, what: string) => (i: { input: unknown }) =>
  `must have at most ${n} ${what} (got ${Array.isArray(i.input) ? i.input.length : Object.keys(i.input as object).length})`;
/** A value as messages show it: strings quoted. */
export const shown = (x: unknown): string => (typeof x === "string" ? JSON.stringify(x) : String(x));
