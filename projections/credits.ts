import type { Knex } from 'knex';
import { prepared } from '../src/db';
import type { TypedEvent } from '../src/eventstore/port';
import { type EventHandlers, handledTypes, type Projection, dispatch, migrateSql } from '../src/eventstore/projection';

/** One credit event as the read model keeps it (from `CreditsUsed` or `CreditsCharged`). */
export interface CreditRow {
  id: string;
  organization_id: string;
  website_id: string | null;
  kind: string;
  credits: number;
  ref_id: string;
  model: string | null;
  occurred_at: string;
}

/**
 * The totals' granularities: a day (UTC) and an hour, each bucket named by its first instant. `table` keeps them per
 * website (website_key, '' for none) and kind, `orgTable` per kind for the whole organization: an organization-wide
 * read (get_credit_usage without website_id, the balances) sums one row per bucket and kind, not one per website too.
 */
export const CREDIT_BUCKETS = [
  { table: 'rm_credit_days', orgTable: 'rm_credit_org_days', ms: 86_400_000 },
  { table: 'rm_credit_hours', orgTable: 'rm_credit_org_hours', ms: 3_600_000 },
] as const;

/** A bucket's first instant in SQL, of `occurred_at` (epoch seconds floored to the granularity: UTC days and hours). */
const bucketSql = (ms: number) => `to_timestamp(floor(extract(epoch from occurred_at) / ${ms / 1000}) * ${ms / 1000})`;

/**
 * Records credit events and adds each to its day's and its hour's totals (per website and for the organization), once:
 * a repeated event inserts nothing and adds nothing. One statement: the totals are summed from the rows the insert
 * returns. Also the bench's way in.
 */
export async function recordCredit(trx: Knex | Knex.Transaction, rows: readonly CreditRow[]): Promise<void> {
  if (!rows.length) return;
  const add = 'do update set credits = h.credits + excluded.credits, events = h.events + excluded.events';
  const totals = CREDIT_BUCKETS.map(
    ({ table, orgTable, ms }, i) => `,
     s${i} as (insert into ${table} as h (organization_id, website_key, bucket, kind, credits, events)
       select organization_id, website_key, ${bucketSql(ms)}, kind, sum(credits), count(*) from ins group by 1, 2, 3, 4
       on conflict (organization_id, website_key, bucket, kind) ${add}),
     o${i} as (insert into ${orgTable} as h (organization_id, bucket, kind, credits, events)
       select organization_id, ${bucketSql(ms)}, kind, sum(credits), count(*) from ins group by 1, 2, 3
       on conflict (organization_id, bucket, kind) ${add})`,
  ).join('');
  await prepared(
    trx,
    'aivis_credits_record',
    `with ins as (insert into rm_credit_events (id, organization_id, website_id, kind, credits, ref_id, model, occurred_at)
       select * from json_to_recordset($1::json) as x(id text, organization_id uuid, website_id uuid, kind text, credits numeric, ref_id text,
         model text, occurred_at timestamptz)
       on conflict (id) do nothing
       returning organization_id, coalesce(website_id::text, '') as website_key, kind, credits, occurred_at)${totals}
     select count(*) from ins`,
    [JSON.stringify(rows)],
  );
}

/** One operator grant of one-off credits (`CreditsGranted`). */
interface GrantRow {
  grant_id: string;
  organization_id: string;
  credits: number;
  reason: string | null;
  granted_at: string;
}

interface Batch {
  rows: CreditRow[];
  grants: GrantRow[];
}

const handlers: EventHandlers<Batch> = {
  CreditsUsed(e, { rows }) {
    rows.push({
      id: e.id,
      organization_id: e.metadata.organization_id,
      website_id: e.data.website_id,
      kind: e.data.purpose,
      credits: e.data.credits,
      ref_id: e.data.response_id ?? e.data.run_id ?? e.id,
      model: e.data.model,
      occurred_at: e.metadata.time,
    });
  },
  CreditsCharged(e, { rows }) {
    rows.push({
      id: e.id,
      organization_id: e.metadata.organization_id,
      website_id: e.data.website_id,
      kind: e.data.kind,
      credits: e.data.credits,
      ref_id: e.data.ref_id,
      model: e.data.model,
      occurred_at: e.metadata.time,
    });
  },
  CreditsGranted(e, { grants }) {
    grants.push({
      grant_id: e.data.grant_id,
      organization_id: e.metadata.organization_id,
      credits: e.data.credits,
      reason: e.data.reason,
      granted_at: e.metadata.time,
    });
  },
};

/**
 * Credit usage: every credit event of every organization (`CreditsUsed` of the engines, `CreditsCharged` of the paid
 * jobs; the organization from the event's metadata), and daily and hourly totals per organization, website and kind:
 * a 90-day sum reads the whole days' totals, the edge days' whole hours and the edge hours' events, never every event.
 * And the operators' grants of one-off credits (rm_credit_grants).
 */
export const creditsProjection: Projection = {
  name: 'credits',
  // 2: the organization's totals (orgTable) beside the websites'
  version: 2,
  tables: ['rm_credit_events', 'rm_credit_grants', ...CREDIT_BUCKETS.flatMap((b) => [b.table, b.orgTable])],
  handles: handledTypes(handlers),
  migrate: migrateSql(`
      create table if not exists rm_credit_events (
        id text primary key,
        organization_id uuid not null,
        website_id uuid,
        kind text not null,
        credits numeric not null,
        ref_id text not null,
        model text,
        occurred_at timestamptz not null
      );
      create index if not exists rm_credit_events_org on rm_credit_events (organization_id, occurred_at desc, id desc);
      create index if not exists rm_credit_events_site on rm_credit_events (website_id, occurred_at desc, id desc);
      create table if not exists rm_credit_grants (
        grant_id text primary key,
        organization_id uuid not null,
        credits numeric not null,
        reason text,
        granted_at timestamptz not null
      );
      create index if not exists rm_credit_grants_org on rm_credit_grants (organization_id, granted_at);
      ${CREDIT_BUCKETS.map(
        ({ table }) => `create table if not exists ${table} (
        organization_id uuid not null,
        website_key text not null,
        bucket timestamptz not null,
        kind text not null,
        credits numeric not null,
        events int not null,
        primary key (organization_id, website_key, bucket, kind)
      );
      create index if not exists ${table}_bucket on ${table} (organization_id, bucket) include (website_key, kind, credits, events);`,
      ).join('\n')}
      ${CREDIT_BUCKETS.map(
        ({ orgTable }) => `create table if not exists ${orgTable} (
        organization_id uuid not null,
        bucket timestamptz not null,
        kind text not null,
        credits numeric not null,
        events int not null,
        primary key (organization_id, bucket, kind) include (credits, events)
      );`,
      ).join('\n')}`),
  async apply(trx, events: TypedEvent[]) {
    const batch: Batch = { rows: [], grants: [] };
    for (const e of events) await dispatch(handlers, e, batch);
    const { rows, grants } = batch;
    for (let i = 0; i < rows.length; i += 1000) await recordCredit(trx, rows.slice(i, i + 1000));
    if (grants.length) await trx('rm_credit_grants').insert(grants).onConflict('grant_id').ignore();
  },
};
