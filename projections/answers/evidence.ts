import type { Knex } from 'knex';
import type { AnswerAnalysis } from '../../src/analysis/answer';
import { dayAndTime } from '../../src/analysis/facts';
import { hostOf, tryNormalizeUrl } from '../../src/domain/urls';
import { boundedMemo } from '../../src/domain/memo';
import type { Recorded } from './handlers';

/**
 * Answer evidence (CONTRACT.md, Answer evidence): what an answer retrieved (its cited sources count as retrieved)
 * and the queries it searched, kept per answer and aggregated per website, UTC day, model and domain or URL so
 * the sources read sums days rather than answers.
 */
export const EVIDENCE_SQL = `
      create table if not exists rm_source_days (
        website_id uuid not null,
        kind smallint not null,
        day date not null,
        model text not null,
        key text not null,
        retrieved int not null,
        cited int not null,
        primary key (website_id, kind, day, model, key)
      ) with (fillfactor = 70);
      -- a day's row is added to by every later answer retrieving that page or domain that day: room left on each page
      -- lets such an update stay on its page (HOT) without a new index entry (a table from before gets it for new pages)
      do $ff$ begin
        if not exists (select 1 from pg_class where oid = 'rm_source_days'::regclass and 'fillfactor=70' = any (coalesce(reloptions, '{}'))) then
          alter table rm_source_days set (fillfactor = 70);
        end if;
      end $ff$;
      create table if not exists rm_response_queries (
        response_id uuid not null,
        website_id uuid not null,
        run_at timestamptz not null,
        prompt_id uuid not null,
        model text not null,
        query text not null,
        qkey text not null,
        primary key (response_id, qkey)
      );
      create index if not exists rm_response_queries_site_time on rm_response_queries (website_id, run_at);`;

/** rm_source_days.kind */
export const BY_DOMAIN = 0;
export const BY_URL = 1;

/** An answer's retrieved pages as stored (rm_responses.retrieved): [url, normalized_url, cited] each, one per normalized URL. */
export type StoredRetrieved = [string, string, boolean];

/** Retrieved pages' normalized URLs, memoized (pages recur across a website's answers, as the analysis' URLs do). */
const normalizedOf = boundedMemo(tryNormalizeUrl);

/** Cited sources first (in the analysis' order), then the engine's retrieved pages not cited; non-URLs dropped. */
export function retrievedOf(a: AnswerAnalysis, retrieved: readonly string[] | undefined): StoredRetrieved[] {
  const out: StoredRetrieved[] = a.sources.map((s) => [s.url, s.normalized_url, true]);
  const seen = new Set(out.map((x) => x[1]));
  for (const url of retrieved ?? []) {
    const n = normalizedOf(url);
    if (n === null || seen.has(n)) continue;
    seen.add(n);
    out.push([url, n, false]);
  }
  return out;
}

/** Queries compared case-insensitively after trimming; the first spelling of each kept. */
export const queryKey = (q: string) => q.trim().toLowerCase();
export function queriesOf(queries: readonly string[] | undefined): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const q of queries ?? []) {
    const k = queryKey(q);
    if (k === '' || seen.has(k)) continue;
    seen.add(k);
    out.push(q.trim());
  }
  return out;
}

/** A plain authority (letters, digits, dots and hyphens, maybe a port) up to where a URL's path, query or fragment starts. */
const PLAIN_AUTHORITY = /^[a-z0-9.-]+(?::\d+)?(?=[/?#\\]|$)/i;
const hostCache = new Map<string, string | null>();

/**
 * The domain of a stored normalized URL: its host without port (normalized already: lower case, no `www.`). The host
 * depends on the authority alone, so a plain one's is parsed once and kept (an import parses each retrieved page's
 * URL otherwise, though a few domains hold most of them); anything else is parsed whole, as before.
 */
export function domainOfNormalized(n: string): string {
  const authority = PLAIN_AUTHORITY.exec(n)?.[0];
  let host: string | null;
  if (authority === undefined) host = hostOf(`http://${n}`);
  else {
    const kept = hostCache.get(authority);
    if (kept !== undefined) host = kept;
    else {
      host = hostOf(`http://${authority}`);
      if (hostCache.size >= 10_000) hostCache.clear();
      hostCache.set(authority, host);
    }
  }
  return host ?? n.split('/')[0];
}

/** Adds the fresh answers' evidence: per-day counts (each answer once per domain and once per URL) and queries. */
export async function insertEvidence(trx: Knex.Transaction, fresh: Recorded[], retrieved: Map<string, StoredRetrieved[]>): Promise<void> {
  // counts by website, day and model (one key per answer), then by URL and by domain: the inner keys are the stored
  // strings themselves, so a lookup hashes no string built for it
  type Count = { retrieved: number; cited: number };
  const groups = new Map<string, { website_id: string; day: string; model: string; keys: [Map<string, Count>, Map<string, Count>] }>();
  const add = (keys: Map<string, Count>, key: string, cited: boolean) => {
    const c = keys.get(key);
    if (c) {
      c.retrieved++;
      if (cited) c.cited++;
    } else keys.set(key, { retrieved: 1, cited: cited ? 1 : 0 });
  };
  const queries: unknown[] = [];
  for (const e of fresh) {
    const d = e.data;
    const { day } = dayAndTime(new Date(d.run_at));
    const g = `${d.website_id}\u0000${day}\u0000${d.model}`;
    let group = groups.get(g);
    if (!group) groups.set(g, (group = { website_id: d.website_id, day, model: d.model, keys: [new Map(), new Map()] }));
    const domains = new Map<string, boolean>();
    for (const [, n, cited] of retrieved.get(d.response_id) ?? []) {
      add(group.keys[BY_URL], n, cited);
      const host = domainOfNormalized(n);
      domains.set(host, (domains.get(host) ?? false) || cited);
    }
    for (const [host, cited] of domains) add(group.keys[BY_DOMAIN], host, cited);
    for (const q of queriesOf(d.search_queries))
      queries.push({
        response_id: d.response_id,
        website_id: d.website_id,
        run_at: d.run_at,
        prompt_id: d.prompt_id,
        model: d.model,
        query: q,
        qkey: queryKey(q),
      });
  }
  const rows: { website_id: string; kind: number; day: string; model: string; key: string; retrieved: number; cited: number }[] = [];
  for (const { website_id, day, model, keys } of groups.values())
    for (const kind of [BY_DOMAIN, BY_URL])
      for (const [key, c] of keys[kind]) rows.push({ website_id, kind, day, model, key, retrieved: c.retrieved, cited: c.cited });
  for (let i = 0; i < rows.length; i += 5000) {
    await trx.raw(
      `insert into rm_source_days (website_id, kind, day, model, key, retrieved, cited)
       select * from json_to_recordset(?::json) as x(website_id uuid, kind smallint, day date, model text, key text, retrieved int, cited int)
       on conflict (website_id, kind, day, model, key) do update set retrieved = rm_source_days.retrieved + excluded.retrieved, cited = rm_source_days.cited + excluded.cited`,
      [JSON.stringify(rows.slice(i, i + 5000))],
    );
  }
  for (let i = 0; i < queries.length; i += 5000) {
    await trx.raw(
      `insert into rm_response_queries select * from json_to_recordset(?::json)
         as x(response_id uuid, website_id uuid, run_at timestamptz, prompt_id uuid, model text, query text, qkey text) on conflict do nothing`,
      [JSON.stringify(queries.slice(i, i + 5000))],
    );
  }
}
