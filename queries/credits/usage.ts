import type { Knex } from 'knex';
import { CREDIT_BUCKETS } from '../../projections/credits';
import { type AnyCreditKind, CREDIT_KINDS } from '../../src/domain/credits';
import type { CreditEventsView, CreditUsageView } from './views';
import { iso } from '../timestamps';
import { newestFirst } from '../paging';

/** Whose credits: an organization's, or only those of some of its websites. */
export interface CreditScope {
  organizationId: string;
  /** null: every credit of the organization (those of no website included) */
  websiteIds: readonly string[] | null;
}

/**
 * Credits by kind with start ≤ occurred_at ≤ end (start null: from the beginning). Whole days inside the range are read
 * from the daily totals, whole hours of the edge days from the hourly ones, and only the edge hours from the events;
 * the totals are the organization's own when the scope is all of it, the websites' otherwise.
 */
export async function creditTotals(
  db: Knex,
  scope: CreditScope,
  start: Date | null,
  end: Date,
): Promise<Map<string, { credits: number; events: number }>> {
  const parts: string[] = [];
  const args: Knex.RawBinding[] = [];
  const sites: Knex.RawBinding[] = scope.websiteIds ? [[...scope.websiteIds] as unknown as Knex.RawBinding] : [];
  /** [from, to) (or [from, to] when `closed`) from level `level` down: CREDIT_BUCKETS, then the events */
  const cover = (from: number | null, to: number, closed: boolean, level: number): void => {
    if (from !== null && (to < from || (to === from && !closed))) return;
    if (level === CREDIT_BUCKETS.length) {
      parts.push(
        `select kind, credits, 1 as events from rm_credit_events where organization_id = ?${scope.websiteIds ? ' and website_id = any(?::uuid[])' : ''}` +
          `${from !== null ? ' and occurred_at >= ?' : ''} and occurred_at ${closed ? '<=' : '<'} ?`,
      );
      args.push(scope.organizationId, ...sites, ...(from !== null ? [iso(from)] : []), iso(to));
      return;
    }
    const { table, orgTable, ms } = CREDIT_BUCKETS[level];
    const first = from === null ? null : Math.ceil(from / ms) * ms;
    const last = Math.floor(to / ms) * ms;
    if (first !== null && first >= last) {
      cover(from, to, closed, level + 1);
      return;
    }
    // the whole organization: its own totals, one row per bucket and kind
    parts.push(
      `select kind, credits, events from ${scope.websiteIds ? table : orgTable} where organization_id = ?${scope.websiteIds ? ' and website_key = any(?::text[])' : ''}` +
        `${first !== null ? ' and bucket >= ?' : ''} and bucket < ?`,
    );
    args.push(scope.organizationId, ...sites, ...(first !== null ? [iso(first)] : []), iso(last));
    if (from !== null && first !== null) cover(from, first, false, level + 1);
    cover(last, to, closed, level + 1);
  };
  cover(start?.getTime() ?? null, end.getTime(), true, 0);
  const r = await db.raw(
    `select kind, sum(credits)::float8 as credits, sum(events)::int as events from (${parts.join(' union all ')}) x group by kind`,
    args,
  );
  return new Map(
    (r.rows as { kind: string; credits: number; events: number }[]).map((row) => [
      row.kind,
      { credits: Number(row.credits), events: Number(row.events) },
    ]),
  );
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

export async function creditUsage(
  db: Knex,
  scope: CreditScope,
  q: { range: CreditUsageView['range']; start: Date | null; end: Date },
): Promise<CreditUsageView> {
  const totals = await creditTotals(db, scope, q.start, q.end);
  const by_kind = CREDIT_KINDS.map((kind) => ({ kind, credits: round(totals.get(kind)?.credits ?? 0), events: totals.get(kind)?.events ?? 0 }));
  return {
    range: q.range,
    start_at_utc: q.start?.toISOString() ?? null,
    end_at_utc: q.end.toISOString(),
    total_credits: round(by_kind.reduce((a, k) => a + k.credits, 0)),
    by_kind,
  };
}

/** The position after which a page continues: the last event's (occurred_at, id), opaque to clients. */
export const encodeOffset = (occurredAt: string, id: string) => Buffer.from(JSON.stringify([occurredAt, id])).toString('base64url');
export function decodeOffset(s: string): { occurred_at: string; id: string } | null {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== 'string' || typeof v[1] !== 'string') return null;
    if (Number.isNaN(Date.parse(v[0]))) return null;
    return { occurred_at: v[0], id: v[1] };
  } catch {
    return null;
  }
}

/**
 * Credit events newest first, keyset-paged on (occurred_at, id): a page continues strictly after the previous page's
 * last event, so events recorded meanwhile (newer than every listed one) neither shift nor repeat what follows.
 */
export async function creditEvents(
  db: Knex,
  scope: CreditScope,
  q: { start: Date | null; end: Date; after: { occurred_at: string; id: string } | null; pageSize: number },
): Promise<CreditEventsView> {
  const query = db('rm_credit_events')
    .where('organization_id', scope.organizationId)
    .where('occurred_at', '<=', q.end.toISOString())
    .orderBy(newestFirst('occurred_at', 'id'))
    .limit(q.pageSize + 1)
    .select('id', 'occurred_at', 'kind', 'credits', 'website_id', 'ref_id');
  if (scope.websiteIds) query.whereIn('website_id', [...scope.websiteIds]);
  if (q.start) query.where('occurred_at', '>=', q.start.toISOString());
  if (q.after) query.whereRaw('(occurred_at, id) < (?::timestamptz, ?)', [q.after.occurred_at, q.after.id]);
  const rows = (await query) as { id: string; occurred_at: Date; kind: AnyCreditKind; credits: string; website_id: string | null; ref_id: string }[];
  const page = rows.slice(0, q.pageSize);
  const events = page.map((r) => ({
    id: r.id,
    occurred_at: iso(r.occurred_at),
    kind: r.kind,
    credits: Number(r.credits),
    website_id: r.website_id,
    ref_id: r.ref_id,
  }));
  const last = events[events.length - 1];
  return { events, next_offset: rows.length > q.pageSize && last ? encodeOffset(last.occurred_at, last.id) : null };
}

/**
 * An organization's credit months for the one-off balance: from the month of its first grant to `now`'s month,
 * consecutive, oldest first, each with its grants and all its use (none when it has no grant).
 */
export async function creditMonths(db: Knex, organizationId: string, now: Date): Promise<{ granted: number; used: number }[]> {
  const r = await db.raw(
    `with g as (
       select date_trunc('month', granted_at at time zone 'UTC') as m, sum(credits)::float8 as granted
       from rm_credit_grants where organization_id = ? and granted_at <= ? group by 1
     ), u as (
       select date_trunc('month', bucket at time zone 'UTC') as m, sum(credits)::float8 as used
       from rm_credit_org_days
       where organization_id = ? and bucket >= (select min(m) from g) at time zone 'UTC' and bucket <= ?
       group by 1
     )
     select to_char(coalesce(g.m, u.m), 'YYYY-MM') as month, coalesce(g.granted, 0) as granted, coalesce(u.used, 0) as used
     from g full join u on g.m = u.m order by 1`,
    [organizationId, now.toISOString(), organizationId, now.toISOString()],
  );
  const rows = r.rows as { month: string; granted: number; used: number }[];
  if (!rows.length) return [];
  const byMonth = new Map(rows.map((row) => [row.month, row]));
  const months: { granted: number; used: number }[] = [];
  const [y, m] = rows[0].month.split('-').map(Number);
  for (let d = new Date(Date.UTC(y, m - 1, 1)); d.getTime() <= now.getTime(); d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1))) {
    const row = byMonth.get(d.toISOString().slice(0, 7));
    months.push({ granted: Number(row?.granted ?? 0), used: Number(row?.used ?? 0) });
  }
  return months;
}
