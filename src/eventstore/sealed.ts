import { createCipheriv, createDecipheriv, type KeyObject, randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { catalogue, MalformedEventError } from '../domain/events';
import { compileSealing, type SealingPlan, sealedSubjects } from '../domain/sealing';
import type { SubjectKeyring } from './keyring';
import {
  type AppendOptions,
  type AppendOutcome,
  appendMany,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type RecordedEvent,
  type StreamAppend,
} from './port';

/**
 * Crypto-shredding at the event-store boundary. The catalogue marks erasable fields (src/domain/sealing.ts); this
 * layer encrypts them on append (AES-256-GCM, a random 96-bit IV per field, the subject as associated data, so a
 * ciphertext cannot be moved to another subject) and decrypts them on every read. The log, and the bus, keep only
 * ciphertext. Appending an event that erases a subject drops the subject's key: its sealed fields then read as null
 * everywhere, and a rebuild yields nothing of them. Events of types without sealed fields pass through untouched.
 */

/** A sealed value as stored: the version byte, the IV, the GCM tag and the ciphertext of the value's JSON, in base64. */
export interface SealedValue {
  $sealed: string;
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export const isSealedValue = (v: unknown): v is SealedValue =>
  typeof v === 'object' && v !== null && typeof (v as SealedValue).$sealed === 'string' && Object.keys(v).length === 1;

function sealValue(key: KeyObject, subject: string, value: unknown): SealedValue {
  const iv = randomBytes(IV_BYTES);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(subject, 'utf8'));
  // GCM is a stream mode: final() adds nothing
  const ct = c.update(JSON.stringify(value), 'utf8');
  c.final();
  return { $sealed: Buffer.concat([Buffer.of(VERSION), iv, c.getAuthTag(), ct]).toString('base64') };
}

/** The value, or undefined when the ciphertext does not open under this subject's key. */
function openValue(key: KeyObject, subject: string, sealed: SealedValue): unknown {
  const b = Buffer.from(sealed.$sealed, 'base64');
  if (b.length < 1 + IV_BYTES + TAG_BYTES || b[0] !== VERSION) return undefined;
  try {
    const d = createDecipheriv('aes-256-gcm', key, b.subarray(1, 1 + IV_BYTES));
    d.setAAD(Buffer.from(subject, 'utf8'));
    d.setAuthTag(b.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
    const text = d.update(b.subarray(1 + IV_BYTES + TAG_BYTES));
    // checks the tag: throws when the ciphertext, the IV or the subject is not the one sealed
    d.final();
    return JSON.parse(text.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Where an opened event keeps its data as stored (sealed fields encrypted). Object spread copies it, so it survives
 * the runner's decode; the bus relay publishes it, so the bus carries ciphertext too.
 */
export const STORED_DATA = Symbol('aivis.storedData');

/** The data as the log keeps it: sealed fields still encrypted. */
export const storedData = (e: { data: unknown }): unknown => (e as { [STORED_DATA]?: unknown })[STORED_DATA] ?? e.data;

/** A sealed append for a subject already erased: its text is not stored (subjects are never given a new key). */
export class SubjectErasedError extends Error {
  readonly kind = 'subject_erased';
  constructor(readonly subject: string) {
    super(`subject ${subject} is erased: its sealed fields cannot be written again`);
  }
}

interface Item {
  id: string;
  type: string;
  data: unknown;
}

/** plan.mapSealed over a stored event; what goes wrong (a sealed value without its subject id, say) is a malformed event. */
function mapEvent(e: Item, plan: SealingPlan, fn: (value: unknown, subject: string) => unknown): unknown {
  try {
    return plan.mapSealed(e.data, fn);
  } catch (err) {
    throw err instanceof MalformedEventError ? err : new MalformedEventError(e.id, e.type, err instanceof Error ? err.message : String(err));
  }
}

/** Seals, opens and erases for one catalogue and one keyring; shared by the event store and the bus. */
export class Sealer {
  readonly plans: Map<string, SealingPlan>;
  /** some type has sealed fields (reads have nothing to look at otherwise) */
  private readonly seals: boolean;

  constructor(
    readonly keyring: SubjectKeyring,
    types: Readonly<Record<string, z.ZodType>> = catalogue,
  ) {
    this.plans = compileSealing(types);
    this.seals = [...this.plans.values()].some((p) => p.seals);
  }

  /**
   * Items with their sealed fields opened (one key lookup for the whole batch): the value, or null for an erased
   * subject. An opened item is a copy carrying its stored data under STORED_DATA; the others come back as they are.
   * A value that does not open (tampered, or moved from another subject) is a MalformedEventError.
   */
  async open<T extends Item>(items: T[]): Promise<T[]> {
    if (!this.seals) return items;
    let subjects: Set<string> | null = null;
    for (const e of items) {
      const plan = this.plans.get(e.type);
      if (plan?.seals) {
        const into = (subjects ??= new Set());
        mapEvent(e, plan, (v, subject) => (isSealedValue(v) && into.add(subject), v));
      }
    }
    if (!subjects || subjects.size === 0) return items;
    const keys = await this.keyring.forOpening(subjects);
    const out = items.slice();
    for (let i = 0; i < items.length; i++) {
      const e = items[i];
      const plan = this.plans.get(e.type);
      if (!plan?.seals) continue;
      const data = mapEvent(e, plan, (v, subject) => {
        // a value written before its field was declared sealed is read as it was stored
        if (!isSealedValue(v)) return v;
        const key = keys.get(subject);
        if (key === undefined) throw new MalformedEventError(e.id, e.type, `no key for subject ${subject} (the key table does not match the log)`);
        if (key === null) return null;
        const opened = openValue(key, subject, v);
        if (opened === undefined) throw new MalformedEventError(e.id, e.type, `a sealed field does not open with the key of subject ${subject}`);
        return opened;
      });
      if (data !== e.data) out[i] = { ...e, data, [STORED_DATA]: (e as { [STORED_DATA]?: unknown })[STORED_DATA] ?? e.data };
    }
    return out;
  }

  /**
   * Items with their sealed fields encrypted (one key lookup, creating missing keys). For an erased subject:
   * `refuse` throws SubjectErasedError (an append), `erase` writes null (a message about something already erased).
   */
  async seal<T extends Item>(items: T[], erased: 'refuse' | 'erase'): Promise<T[]> {
    if (!this.seals) return items;
    let subjects: Set<string> | null = null;
    for (const e of items) {
      const plan = this.plans.get(e.type);
      if (plan?.seals) sealedSubjects(plan, e.data, (subjects ??= new Set()), (v) => !isSealedValue(v));
    }
    if (!subjects || subjects.size === 0) return items;
    const keys = await this.keyring.forSealing(subjects);
    return items.map((e) => {
      const plan = this.plans.get(e.type);
      if (!plan?.seals) return e;
      const data = plan.mapSealed(e.data, (v, subject) => {
        if (isSealedValue(v)) return v;
        const key = keys.get(subject);
        if (!key) {
          if (erased === 'refuse') throw new SubjectErasedError(subject);
          return null;
        }
        return sealValue(key, subject, v);
      });
      return data === e.data ? e : { ...e, data };
    });
  }

  /** The subjects these items erase. */
  erasedBy(items: readonly Item[]): string[] {
    const out: string[] = [];
    for (const e of items) {
      const plan = this.plans.get(e.type);
      if (plan?.erases) out.push(...plan.erased(e.data));
    }
    return out;
  }
}

const sealers = new WeakMap<EventStore, Sealer>();

/**
 * The event store with erasable fields sealed: what the composition root hands to commands, projections and the
 * relay. Appending an event that erases subjects shreds their keys once the append has succeeded (the erasure
 * projection does it again after a crash in between).
 */
export function sealEventStore(inner: EventStore, sealer: Sealer): EventStore {
  const openEvents = (events: RecordedEvent[]) => sealer.open(events);
  /** whether an append has a field to seal (most have none and go straight through) */
  const sealsAny = (events: readonly NewEvent[]) => events.some((e) => sealer.plans.has(e.type));
  const appendSealed = async (streamId: string, events: NewEvent[], expected: ExpectedRevision, options?: AppendOptions) => {
    const result = await inner.append(streamId, await sealer.seal(events, 'refuse'), expected, options);
    const erased = sealer.erasedBy(events);
    if (erased.length) await sealer.keyring.shred(erased);
    return result;
  };
  const store: EventStore = {
    name: inner.name,
    append(streamId: string, events: NewEvent[], expected, options) {
      // the usual append (no sealed field, nothing erased) goes straight through
      if (!sealsAny(events)) return inner.append(streamId, events, expected, options);
      return appendSealed(streamId, events, expected, options);
    },
    // the appends' sealed fields in one key lookup, the appends in one go (appendMany); an append for an erased
    // subject is refused alone, as it would be on its own
    appendMany: async (appends: StreamAppend[]): Promise<AppendOutcome[]> => {
      let sealedEvents: NewEvent[];
      try {
        sealedEvents = await sealer.seal(
          appends.flatMap((a) => a.events),
          'refuse',
        );
      } catch (err) {
        if (!(err instanceof SubjectErasedError)) throw err;
        return Promise.all(
          appends.map((a) =>
            store.append(a.streamId, a.events, a.expected).then(
              (result): AppendOutcome => ({ ok: true, result }),
              (error): AppendOutcome => ({ ok: false, error }),
            ),
          ),
        );
      }
      let at = 0;
      const outcomes = await appendMany(
        inner,
        appends.map((a) => ({ ...a, events: sealedEvents.slice(at, (at += a.events.length)) })),
      );
      const erased = sealer.erasedBy(appends.flatMap((a, i) => (outcomes[i].ok ? a.events : [])));
      if (erased.length) await sealer.keyring.shred(erased);
      return outcomes;
    },
    transact:
      inner.transact &&
      (async (work) => {
        let erased: string[] = [];
        const out = await inner.transact!((tx) => {
          erased = [];
          return work({
            trx: tx.trx,
            append: async (streamId, events, expected) => {
              const result = await tx.append(streamId, sealsAny(events) ? await sealer.seal(events, 'refuse') : events, expected);
              erased.push(...sealer.erasedBy(events));
              return result;
            },
          });
        });
        if (erased.length) await sealer.keyring.shred(erased);
        return out;
      }),
    readStream: async (streamId, options) => openEvents(await inner.readStream(streamId, options)),
    readAll: async (after, maxCount) => openEvents(await inner.readAll(after, maxCount)),
    readAllOfTypes:
      inner.readAllOfTypes &&
      (async (...args) => {
        const b = await inner.readAllOfTypes!(...args);
        return { ...b, events: await openEvents(b.events) };
      }),
    headPosition: () => inner.headPosition(),
    lastPosition: () => inner.lastPosition(),
    onAppend: (listener) => inner.onAppend(listener),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  sealers.set(store, sealer);
  return store;
}

/** The sealer of a store made by sealEventStore. */
export function sealerOf(store: EventStore): Sealer {
  const s = sealers.get(store);
  if (!s) throw new Error(`event store ${store.name} does not seal erasable fields (open it with sealEventStore)`);
  return s;
}

/**
 * Erases subjects at once: their keys are dropped, and their sealed fields read as null from now on, on every
 * instance. An area normally needs no call: appending its delete event (an `erases` field) does this. For an erasure
 * with no delete event of its own, call it after appending whatever tells the projections to drop their rows.
 */
export async function shredSubjects(store: EventStore, subjects: readonly string[]): Promise<void> {
  await sealerOf(store).keyring.shred(subjects);
}
