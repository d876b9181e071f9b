/**
 * Builder sugar over `createController` + `Controller.watch` + `Controller.resync`. It adds no
 * machinery; each call stands for one lower-level call:
 *
 *   .for(source, kind)        ≡ ctrl.watch(source, enqueueForObject())
 *                               + ctrl.resync(() => source.list().map(objectKey), resyncOptions)
 *   .for(source, kind, keep)  ≡ the same with only the events for which keep(event) is true
 *                               (controller-runtime's WithPredicates; resyncs are not filtered)
 *   .owns(source, opts)       ≡ ctrl.watch(source, enqueueForOwner(kind), opts)   // controller owner only
 *   .watches(source, mapFn, opts) ≡ ctrl.watch(source, enqueueMapped(mapFn), opts)
 *   .build(options)           ≡ createController(options), then the calls above in order
 *
 * `for` is required and comes once; `owns` maps to the `for` kind.
 */
import type { KubeObject } from "../kube/types.ts";
import type { Controller, ControllerOptions, ResyncOptions, WatchOptions } from "./controller.ts";
import { createController } from "./controller.ts";
import { objectKey } from "./reconcile.ts";
import type { EventHandler, EventSource, OwnerKind, SourceEvent } from "./source.ts";
import { enqueueForObject, enqueueForOwner, enqueueMapped } from "./source.ts";

export interface BuildOptions extends ControllerOptions {
  /** Periodic resync of every object of the `for` source (default every 10 h ± 10%); false to disable. */
  resync?: ResyncOptions | false;
}

type Watch = {
  source: EventSource<never>;
  handler: (kind: OwnerKind) => EventHandler<never>;
  opts: WatchOptions<never> | undefined;
};

export interface ControllerBuilder {
  /** The kind this controller reconciles; `keep`, if given, decides which of its events are enqueued. */
  for<T extends KubeObject>(
    source: EventSource<T>,
    kind: OwnerKind,
    keep?: (e: SourceEvent<T>) => boolean,
  ): ControllerBuilder;
  /** Child objects whose controller owner reference points at a `for` object; `opts.priority` for their keys. */
  owns<T extends KubeObject>(source: EventSource<T>, opts?: WatchOptions<T>): ControllerBuilder;
  /** Any other objects, mapped to keys of `for` objects. */
  watches<T>(source: EventSource<T>, map: (obj: T) => Iterable<string>, opts?: WatchOptions<T>): ControllerBuilder;
  build(options: BuildOptions): Controller;
}

export function controllerBuilder(): ControllerBuilder {
  let primary:
    | { source: EventSource<KubeObject>; kind: OwnerKind; keep?: (e: SourceEvent<KubeObject>) => boolean }
    | undefined;
  const watches: Watch[] = [];
  const builder: ControllerBuilder = {
    for(source, kind, keep) {
      if (primary) throw new Error("controllerBuilder: for() was already called; a controller reconciles one kind");
      primary = {
        source: source as unknown as EventSource<KubeObject>,
        kind,
        ...(keep ? { keep: keep as (e: SourceEvent<KubeObject>) => boolean } : {}),
      };
      return builder;
    },
    owns(source, opts) {
      watches.push({
        source: source as EventSource<never>,
        handler: (kind) => enqueueForOwner(kind) as EventHandler<never>,
        opts: opts as WatchOptions<never> | undefined,
      });
      return builder;
    },
    watches(source, map, opts) {
      watches.push({
        source: source as EventSource<never>,
        handler: () => enqueueMapped(map) as EventHandler<never>,
        opts: opts as WatchOptions<never> | undefined,
      });
      return builder;
    },
    build(options) {
      if (!primary)
        throw new Error(
          "controllerBuilder: call for(source, kind) before build(): a controller needs the kind it reconciles",
        );
      const { resync, ...controllerOptions } = options;
      const ctrl = createController(controllerOptions);
      const { source, kind, keep } = primary;
      const enqueue = enqueueForObject<KubeObject>();
      ctrl.watch(source, keep ? (e, add) => keep(e) && enqueue(e, add) : enqueue);
      if (resync !== false) ctrl.resync(() => source.list().map(objectKey), resync ?? {});
      for (const w of watches) ctrl.watch(w.source, w.handler(kind), w.opts);
      return ctrl;
    },
  };
  return builder;
}
