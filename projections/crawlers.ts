import type { Knex } from 'knex';
import { type EventHandlers, handlerProjection, migrateSql } from '../src/eventstore/projection';

const handlers: EventHandlers<Knex.Transaction> = {
  async CrawlerHitsImported(e, trx) {
    const rows = e.data.rows;
    if (rows.length === 0) return;
    await trx.raw(
      `insert into rm_crawler_hits (website_id, day, bot, url, status, verification, hits, last_seen)
       select ?::uuid, * from unnest(?::date[], ?::text[], ?::text[], ?::int[], ?::text[], ?::bigint[], ?::timestamptz[])
       on conflict (website_id, day, bot, url, status, verification)
       do update set hits = rm_crawler_hits.hits + excluded.hits, last_seen = greatest(rm_crawler_hits.last_seen, excluded.last_seen)`,
      [
        e.data.website_id,
        rows.map((r) => r.day),
        rows.map((r) => r.bot),
        rows.map((r) => r.url),
        rows.map((r) => r.status),
        rows.map((r) => r.verification),
        rows.map((r) => r.hits),
        rows.map((r) => r.last_seen),
      ],
    );
    // the rollups the activity reads over long periods: hits per day without pages, and per month each page's days as bits
    const daily = new Map<string, { day: string; bot: string; status: number; verification: string; hits: number; last_seen: string }>();
    const months = new Map<string, { month: string; bot: string; status: number; verification: string; url: string; days: bigint }>();
    for (const r of rows) {
      const dk = `${r.day}\t${r.bot}\t${r.status}\t${r.verification}`;
      const d = daily.get(dk);
      if (d) {
        d.hits += r.hits;
        if (r.last_seen > d.last_seen) d.last_seen = r.last_seen;
      } else daily.set(dk, { day: r.day, bot: r.bot, status: r.status, verification: r.verification, hits: r.hits, last_seen: r.last_seen });
      const month = `${r.day.slice(0, 7)}-01`;
      const bit = 1n << BigInt(Number(r.day.slice(8, 10)) - 1);
      const mk = `${month}\t${r.bot}\t${r.status}\t${r.verification}\t${r.url}`;
      const m = months.get(mk);
      if (m) m.days |= bit;
      else months.set(mk, { month, bot: r.bot, status: r.status, verification: r.verification, url: r.url, days: bit });
    }
    const ds = [...daily.values()];
    await trx.raw(
      `insert into rm_crawler_daily (website_id, day, bot, status, verification, hits, last_seen)
       select ?::uuid, * from unnest(?::date[], ?::text[], ?::int[], ?::text[], ?::bigint[], ?::timestamptz[])
       on conflict (website_id, day, bot, status, verification)
       do update set hits = rm_crawler_daily.hits + excluded.hits, last_seen = greatest(rm_crawler_daily.last_seen, excluded.last_seen)`,
      [
        e.data.website_id,
        ds.map((r) => r.day),
        ds.map((r) => r.bot),
        ds.map((r) => r.status),
        ds.map((r) => r.verification),
        ds.map((r) => r.hits),
        ds.map((r) => r.last_seen),
      ],
    );
    const ms = [...months.values()];
    await trx.raw(
      `insert into rm_crawler_url_months (website_id, month, bot, status, verification, url, days)
       select ?::uuid, * from unnest(?::date[], ?::text[], ?::int[], ?::text[], ?::text[], ?::bigint[])
       on conflict (website_id, verification, month, bot, status, url) do update set days = rm_crawler_url_months.days | excluded.days`,
      [
        e.data.website_id,
        ms.map((r) => r.month),
        ms.map((r) => r.bot),
        ms.map((r) => r.status),
        ms.map((r) => r.verification),
        ms.map((r) => r.url),
        ms.map((r) => r.days.toString()),
      ],
    );
  },
};

/**
 * AI crawler hits per (website, day, bot, page, status, verification), summed as batches of log lines arrive, with two
 * rollups for long periods: hits per day (no page) and, per month, the days each page was crawled as bits.
 */
export const crawlersProjection = handlerProjection(
  {
    name: 'crawlers',
    version: 2,
    tables: ['rm_crawler_hits', 'rm_crawler_daily', 'rm_crawler_url_months'],
    migrate: migrateSql(`
        create table if not exists rm_crawler_hits (
          website_id uuid not null,
          day date not null,
          bot text not null,
          url text not null,
          status int not null,
          verification text not null,
          hits bigint not null,
          last_seen timestamptz not null,
          primary key (website_id, day, bot, url, status, verification)
        );
        create index if not exists rm_crawler_hits_verification on rm_crawler_hits (website_id, verification, day) include (bot, url, status, hits, last_seen);
        create table if not exists rm_crawler_daily (
          website_id uuid not null,
          day date not null,
          bot text not null,
          status int not null,
          verification text not null,
          hits bigint not null,
          last_seen timestamptz not null,
          primary key (website_id, day, bot, status, verification)
        );
        -- bit d-1 of days: the page was crawled on day d of the month
        create table if not exists rm_crawler_url_months (
          website_id uuid not null,
          verification text not null,
          month date not null,
          bot text not null,
          status int not null,
          url text not null,
          days bigint not null,
          primary key (website_id, verification, month, bot, status, url)
        );`),
  },
  handlers,
);
