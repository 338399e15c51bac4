import { newId } from '../src/domain/ids';
import { type Actor, type DomainEvent, decodeEvent, type EventMetadata, type EventType, isEventOf } from '../src/domain/events';
import { type DomainError, isDomainError, notFound } from '../src/domain/errors';
import { type EventStore, type Position, WrongExpectedRevisionError } from '../src/eventstore/port';

/** How a stream's state is rebuilt from its events. */
export interface Aggregate<S, E extends DomainEvent = DomainEvent> {
  /** the event types of its kind of stream (the union E): load folds these and passes any other by */
  types: readonly E['type'][];
  /** the stream's state before its first event (a new object on every call) */
  initial: () => S;
  /**
   * Pure: the state after the event; `state` is never changed, so two evolves of one state are independent. Its
   * switch ends in `exhaustive(e, s)` (src/domain/events.ts): a type of E without its case (handled, or listed as
   * ignored) fails tsc.
   */
  evolve: (state: S, event: E) => S;
  /**
   * Replay for load alone, so a long stream costs one copy, not one per event: `own` copies a state deep enough
   * that `apply` may change the copy in place; `apply` folds an event into a state load owns and returns it.
   * Without it load folds with evolve.
   */
  replay?: { own: (state: S) => S; apply: (owned: S, event: E) => S };
}

type MapKeys<S> = { [K in keyof S]: S[K] extends Map<string, unknown> ? K : never }[keyof S];

/**
 * The maps of a state one event writes, copied on write: on a state load owns (`owned`, replay) a write changes the
 * state's own map; otherwise a map's first write copies it (and the state, once) into `state`, and `s` is left as it was.
 */
export function mapWriter<S extends object>(s: S, owned: boolean) {
  const m = {
    state: s,
    write<K extends MapKeys<S>>(k: K): S[K] {
      if (owned) return s[k];
      if (m.state === s) m.state = { ...s };
      if (m.state[k] === s[k]) m.state[k] = new Map(s[k] as Map<string, unknown>) as S[K];
      return m.state[k];
    },
  };
  return m;
}

const guards = new WeakMap<readonly EventType[], (e: DomainEvent) => boolean>();
/** The event is of the aggregate's stream kind (its evolve takes it). */
export function isEventFor<S, E extends DomainEvent>(agg: Aggregate<S, E>, e: DomainEvent): e is E {
  let guard = guards.get(agg.types);
  if (!guard) guards.set(agg.types, (guard = isEventOf(agg.types)));
  return guard(e);
}

/** A state folded from events with evolve (those of other types passed by, as load does). */
export const foldEvents = <S, E extends DomainEvent>(agg: Aggregate<S, E>, events: readonly DomainEvent[], state = agg.initial()): S =>
  events.reduce((s, e) => (isEventFor(agg, e) ? agg.evolve(s, e) : s), state);

/** What decide returns: events to append (with optional deterministic ids) and what the caller gets back. */
export interface Decision<R> {
  events: (DomainEvent & { id?: string })[];
  result: R;
}

export interface CommandContext {
  store: EventStore;
  organizationId: string;
  websiteId?: string | null;
  actor: Actor;
  correlationId?: string;
  causationId?: string | null;
  now?: () => Date;
}

export interface Handled<R> {
  result: R;
  /** global position of the last event appended (or already stored); null when nothing was appended */
  position: Position | null;
  events: DomainEvent[];
}

interface Cached<S> {
  revision: bigint;
  state: S;
  /** the aggregate that folded it: a stream loaded through another aggregate is not served its shape */
  agg: Aggregate<unknown>;
}

const CACHE_LIMIT = 2000;
const caches = new WeakMap<EventStore, Map<string, Cached<unknown>>>();

/**
 * Loads a stream's state, reading only the events after a cached revision. The cached state is shared by every
 * caller and never changed: new events are folded into a copy (or into initial(), which nobody else holds).
 */
export async function load<S, E extends DomainEvent>(store: EventStore, streamId: string, agg: Aggregate<S, E>): Promise<Cached<S>> {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new Map()));
  const cached = cache.get(streamId) as Cached<S> | undefined;
  const hit = cached && cached.agg === (agg as unknown as Aggregate<unknown>) ? cached : undefined;
  let state = hit ? hit.state : agg.initial();
  let revision = hit ? hit.revision : -1n;
  const events = await store.readStream(streamId, { fromRevision: revision + 1n });
  if (events.length) {
    const replay = agg.replay;
    if (replay && hit) state = replay.own(state);
    const step = replay ? replay.apply : agg.evolve;
    for (const e of events) {
      const d = decodeEvent(e.id, e.type, e.data, e.metadata.schema_version);
      if (isEventFor(agg, d)) state = step(state, d);
      revision = e.revision;
    }
  }
  const fresh: Cached<S> = { revision, state, agg: agg as unknown as Aggregate<unknown> };
  if (revision >= 0n) {
    cache.delete(streamId);
    cache.set(streamId, fresh);
    if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  }
  return fresh;
}

export function metadataFor(ctx: CommandContext, correlationId = ctx.correlationId ?? newId()): EventMetadata {
  return {
    organization_id: ctx.organizationId,
    website_id: ctx.websiteId ?? null,
    actor: ctx.actor,
    correlation_id: correlationId,
    causation_id: ctx.causationId ?? null,
    time: (ctx.now?.() ?? new Date()).toISOString(),
  };
}

/** Events ready to append on a context's behalf (for writes that need no state, such as a new stream). */
export function newEventsFor(ctx: CommandContext, events: (DomainEvent & { id?: string })[]) {
  const metadata = metadataFor(ctx);
  return events.map(({ id, ...e }) => ({ id: id ?? newId(), type: e.type, data: e.data, metadata }));
}

/**
 * A concurrency conflict reaches the caller after at least MAX_ATTEMPTS and CONFLICT_BUDGET_MS (only writers in other
 * instances can still race: one draining a queue of writes to the stream can win many rounds in a row).
 */
const MAX_ATTEMPTS = 8;
const CONFLICT_BUDGET_MS = 3000;

/**
 * Writes to one stream through one store (one per process) run one at a time: they would only conflict with each
 * other. Writers in other processes still race, and the expected revision settles it.
 */
const locksByStore = new WeakMap<EventStore, Map<string, Promise<unknown>>>();
async function withStreamLock<T>(store: EventStore, streamId: string, fn: () => Promise<T>): Promise<T> {
  let streamLocks = locksByStore.get(store);
  if (!streamLocks) locksByStore.set(store, (streamLocks = new Map()));
  const previous = streamLocks.get(streamId) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const tail = run.catch(() => undefined);
  streamLocks.set(streamId, tail);
  try {
    return await run;
  } finally {
    if (streamLocks.get(streamId) === tail) streamLocks.delete(streamId);
  }
}

/**
 * Loads the stream, decides, appends with the expected revision; on a concurrency conflict reloads and decides
 * again after a short jittered pause, within MAX_ATTEMPTS and CONFLICT_BUDGET_MS (and at once after an append whose event ids were all
 * stored already). decide must be pure: it may run several times.
 */
export function handle<S, R, E extends DomainEvent>(
  ctx: CommandContext,
  streamId: string,
  agg: Aggregate<S, E>,
  decide: (state: S) => Decision<R> | DomainError,
): Promise<Handled<R> | DomainError> {
  return withStreamLock(ctx.store, streamId, async (): Promise<Handled<R> | DomainError> => {
    const correlationId = ctx.correlationId ?? newId();
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      const { revision, state } = await load(ctx.store, streamId, agg);
      const decision = decide(state);
      if (isDomainError(decision)) return decision;
      if (decision.events.length === 0) return { result: decision.result, position: null, events: [] };
      const metadata = metadataFor(ctx, correlationId);
      try {
        const r = await ctx.store.append(
          streamId,
          decision.events.map(({ id, ...e }) => ({ id: id ?? newId(), type: e.type, data: e.data, metadata })),
          revision < 0n ? 'no_stream' : revision,
        );
        // every event id was stored already (another writer decided the same, under the same derived ids): decide
        // again on the state that holds them, so the result says what this call did
        if (r.noop && attempt + 1 < MAX_ATTEMPTS) continue;
        return { result: decision.result, position: r.position, events: decision.events };
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        if (attempt + 1 >= MAX_ATTEMPTS && Date.now() - started >= CONFLICT_BUDGET_MS) throw err;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(200, 5 * 2 ** attempt)));
      }
    }
  });
}

/** Creates a record on a stream of its own: a new id, and the one event `created` makes of it. */
export function handleNew<S, E extends DomainEvent>(
  ctx: CommandContext,
  streamOf: (id: string) => string,
  agg: Aggregate<S, E>,
  created: (id: string) => E,
) {
  const id = newId();
  return handle(ctx, streamOf(id), agg, () => ({ events: [created(id)], result: { id } }));
}

/** A write to a record that only a live one takes: a record never created, or deleted, is not found (`missing`). */
export function handleLive<S extends { status: string }, R, E extends DomainEvent>(
  ctx: CommandContext,
  streamId: string,
  agg: Aggregate<S, E>,
  missing: string,
  decide: (state: S) => Decision<R> | DomainError,
) {
  return handle(ctx, streamId, agg, (s) => (s.status === 'live' ? decide(s) : notFound(missing)));
}
