import { createCipheriv, createDecipheriv, createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * The keys of erasable subjects (`content-<id>`, `fact-<id>`, …), kept outside the log in aivis_subject_keys. Erasing
 * a subject drops its key and leaves a tombstone (key null, shredded_at set): its sealed fields can never be read
 * again, and a later sealed append for it is refused rather than given a new key.
 *
 * Keys are stored wrapped (AES-256-GCM) with a master key from ERASURE_MASTER_KEY, so a copy of the database alone
 * (a dump, a backup, dead row versions on disk) does not read sealed text when the master key is kept elsewhere.
 * Without the variable an embedded default wraps them: the layout is the same, the protection is only the shred.
 */
export interface SubjectKeyring {
  /**
   * The keys of these subjects as the table has them now (one query, whatever the cache holds): a key, null for an
   * erased subject; a subject with no row is absent from the map.
   */
  forOpening(subjects: Iterable<string>): Promise<Map<string, KeyObject | null>>;
  /** The same, creating the keys of subjects that have none yet; null for an erased subject. */
  forSealing(subjects: Iterable<string>): Promise<Map<string, KeyObject | null>>;
  /** Drops the subjects' keys for good (idempotent; on `conn` when given, e.g. a projection's transaction). */
  shred(subjects: readonly string[], conn?: Knex): Promise<void>;
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const WRAP_VERSION = 1;
/** Unwrapped keys kept in memory: their presence is still checked against the table on every use. */
const CACHE_SIZE = 10_000;

/**
 * The embedded default master key (32 bytes, hex). Public by nature: it keeps the wrapped layout the same whether
 * or not an operator sets ERASURE_MASTER_KEY, and protects nothing by itself.
 */
export const DEFAULT_MASTER_KEY = '616976697320657261737572652064656661756c74206d6173746572206b6579';

/** ERASURE_MASTER_KEY: 64 hex digits or the base64 of 32 bytes. */
export function parseMasterKey(value: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/]{43}=?$/.test(value)) {
    const b = Buffer.from(value, 'base64');
    if (b.length === KEY_BYTES) return b;
  }
  return null;
}

export class MasterKeyMismatchError extends Error {}

const SCHEMA = `
create table if not exists aivis_subject_keys (
  subject text primary key,
  -- the subject's key wrapped with the master key; null once erased
  key bytea,
  created_at timestamptz not null default now(),
  shredded_at timestamptz,
  check ((key is null) = (shredded_at is not null))
);
-- one row: a check value of the master key that wrapped the subject keys (a changed ERASURE_MASTER_KEY is refused)
create table if not exists aivis_subject_key_master (
  id smallint primary key default 1 check (id = 1),
  check_value bytea not null
);`;

function wrap(master: KeyObject, subject: string, key: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const c = createCipheriv('aes-256-gcm', master, iv);
  c.setAAD(Buffer.from(subject, 'utf8'));
  const ct = Buffer.concat([c.update(key), c.final()]);
  return Buffer.concat([Buffer.of(WRAP_VERSION), iv, c.getAuthTag(), ct]);
}

function unwrap(master: KeyObject, subject: string, wrapped: Buffer): KeyObject {
  if (wrapped.length !== 1 + IV_BYTES + TAG_BYTES + KEY_BYTES || wrapped[0] !== WRAP_VERSION)
    throw new Error(`the key of subject ${subject} is not a wrapped key`);
  const d = createDecipheriv('aes-256-gcm', master, wrapped.subarray(1, 1 + IV_BYTES));
  d.setAAD(Buffer.from(subject, 'utf8'));
  d.setAuthTag(wrapped.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
  return createSecretKey(Buffer.concat([d.update(wrapped.subarray(1 + IV_BYTES + TAG_BYTES)), d.final()]));
}

export async function migrateSubjectKeys(db: Knex): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(7163403)');
    await trx.raw(SCHEMA);
  });
}

export interface KeyringOptions {
  /** null or absent: the embedded default */
  masterKey?: Buffer | null;
  /**
   * The log is kept in this same database: a new key's commit need not wait for its WAL flush, since the append that
   * uses it commits after it and flushes the WAL past it (a key lost in a crash was used by nothing). Not with
   * EventStoreDB, whose appends are durable elsewhere.
   */
  logInSameDatabase?: boolean;
}

/** Opens the key table on `db` (the read models' database, also beside EventStoreDB); checks the master key. */
export async function openSubjectKeyring(db: Knex, options: KeyringOptions = {}): Promise<SubjectKeyring> {
  await migrateSubjectKeys(db);
  const masterBytes = options.masterKey ?? Buffer.from(DEFAULT_MASTER_KEY, 'hex');
  if (masterBytes.length !== KEY_BYTES) throw new Error('the erasure master key must be 32 bytes');
  const master = createSecretKey(masterBytes);
  const check = createHmac('sha256', masterBytes).update('aivis subject keys').digest().subarray(0, 16);
  await db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(7163403)');
    const row = (await trx('aivis_subject_key_master').first('check_value')) as { check_value: Buffer } | undefined;
    if (!row) await trx('aivis_subject_key_master').insert({ id: 1, check_value: check });
    else if (!Buffer.from(row.check_value).equals(check)) {
      // no live key was wrapped with the old master key: nothing to lose by adopting the new one
      const live = await trx('aivis_subject_keys').whereNotNull('key').first(trx.raw('1 as one'));
      if (live)
        throw new MasterKeyMismatchError(
          'ERASURE_MASTER_KEY is not the master key that wrapped the stored subject keys (set it back to the one in use)',
        );
      await trx('aivis_subject_key_master').update({ check_value: check });
    }
  });

  const lazyCommit = options.logInSameDatabase ? ` cross join (select set_config('synchronous_commit', 'off', true)) as lazy` : '';
  const cache = new Map<string, KeyObject>();
  const remember = (subject: string, key: KeyObject) => {
    cache.delete(subject);
    cache.set(subject, key);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  };

  /** A row's key: from the cache when the row is live and cached (no unwrap), else unwrapped and cached. */
  const keyOf = (subject: string, wrapped: Buffer | null): KeyObject | null => {
    if (wrapped === null) {
      cache.delete(subject);
      return null;
    }
    const hit = cache.get(subject);
    if (hit) return hit;
    const key = unwrap(master, subject, Buffer.from(wrapped));
    remember(subject, key);
    return key;
  };

  return {
    async forOpening(subjects) {
      const all = [...new Set(subjects)];
      const out = new Map<string, KeyObject | null>();
      if (all.length === 0) return out;
      const cached = new Map<string, KeyObject>();
      for (const s of all) {
        const k = cache.get(s);
        if (k) cached.set(s, k);
      }
      const missing = all.filter((s) => !cached.has(s));
      // a cached key is trusted only for its bytes: whether the subject is still live is asked every time
      const r = await db.raw(
        `select subject, key is null as erased, case when subject = any(?::text[]) then key end as key
           from aivis_subject_keys where subject = any(?::text[])`,
        [missing, all],
      );
      for (const row of r.rows as { subject: string; erased: boolean; key: Buffer | null }[]) {
        if (row.erased) out.set(row.subject, keyOf(row.subject, null));
        else if (row.key === null) out.set(row.subject, cached.get(row.subject)!);
        else out.set(row.subject, keyOf(row.subject, row.key));
      }
      return out;
    },

    async forSealing(subjects) {
      const out = new Map<string, KeyObject | null>();
      let want = [...new Set(subjects)];
      // two tries: a key another transaction inserted after this statement's snapshot is seen by the next one
      for (let attempt = 0; want.length > 0 && attempt < 3; attempt++) {
        // a cached subject has its row already: no new key made for it (on a retry, every subject gets one)
        const make = attempt === 0 ? want.filter((s) => !cache.has(s)) : want;
        const fresh = randomBytes(KEY_BYTES * make.length);
        const made = new Map(make.map((s, i) => [s, wrap(master, s, fresh.subarray(i * KEY_BYTES, (i + 1) * KEY_BYTES))]));
        const wrapped = want.map((s) => made.get(s) ?? null) as Buffer[];
        const r = await db.raw(
          `with want as (select * from unnest(?::text[], ?::bytea[]) as w(subject, key)),
                ins as (insert into aivis_subject_keys (subject, key) select subject, key from want where key is not null
                         on conflict (subject) do nothing returning subject, key)
           select w.subject, coalesce(i.key, k.key) as key, (i.subject is not null or k.subject is not null) as seen
             from want w left join ins i on i.subject = w.subject left join aivis_subject_keys k on k.subject = w.subject${lazyCommit}`,
          [want, wrapped],
        );
        const again: string[] = [];
        for (const row of r.rows as { subject: string; key: Buffer | null; seen: boolean }[]) {
          if (!row.seen) again.push(row.subject);
          else out.set(row.subject, keyOf(row.subject, row.key));
        }
        want = again;
      }
      if (want.length) throw new Error(`no key could be made for subjects ${want.join(', ')}`);
      return out;
    },

    async shred(subjects, conn = db) {
      const all = [...new Set(subjects)];
      if (all.length === 0) return;
      for (const s of all) cache.delete(s);
      await conn.raw(
        `insert into aivis_subject_keys (subject, key, shredded_at) select s, null, now() from unnest(?::text[]) as s
         on conflict (subject) do update set key = null, shredded_at = coalesce(aivis_subject_keys.shredded_at, excluded.shredded_at)`,
        [all],
      );
    },
  };
}
