/**
 * One term of leadership: the work started on acquire, and when renewing should stop.
 * - `work` aborts when the work must stop: shutdown requested, the work failed, or the term ended (lost).
 * - `renewing` aborts when renewing should stop: the work failed, or shutdown was requested and the work drained.
 */
export class Term {
  readonly #work = new AbortController();
  readonly #renewing = new AbortController();
  readonly #shutdown: AbortSignal;
  readonly #onShutdown: () => void;
  /** Set when onStartedLeading threw or rejected. */
  workError: unknown;

  constructor(
    shutdown: AbortSignal,
    start: (signal: AbortSignal) => void | Promise<void>,
    onFail: (e: unknown) => void,
  ) {
    this.#shutdown = shutdown;
    const drained = Promise.resolve()
      .then(() => start(this.#work.signal))
      .catch((e: unknown) => {
        this.workError = e ?? new Error("onStartedLeading failed");
        onFail(e);
        this.#work.abort();
        this.#renewing.abort();
      });
    this.#onShutdown = () => {
      this.#work.abort();
      void drained.then(() => this.#renewing.abort());
    };
    if (shutdown.aborted) this.#onShutdown();
    else shutdown.addEventListener("abort", this.#onShutdown, { once: true });
  }

  get renewing(): AbortSignal {
    return this.#renewing.signal;
  }

  /** Stops the work (if still running) and forgets the shutdown signal. */
  end(): void {
    this.#shutdown.removeEventListener("abort", this.#onShutdown);
    this.#work.abort();
  }
}
