/** The one error class for a usage mistake: the message names the flag or argument as the user typed it; exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
