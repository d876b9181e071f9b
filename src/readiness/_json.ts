/** Defensive readers for JSON of unknown shape (a status written by someone else): a wrong type reads as empty. */
export const record = (x: unknown): Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
export const array = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
