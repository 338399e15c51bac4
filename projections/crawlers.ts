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
    // hits per day without pages; per page the days it was crawled as a multirange (a page a row, whatever the period)
    const daily = new Map<string, { day: string; bot: string; status: number; verification: string; hits: number; last_seen: string }>();
    for (const r of rows) {
      const dk = `${r.day}\t${r.bot}\t${r.status}\t${r.verification}`;
      const d = daily.get(dk);
      if (d) {
        d.hits += r.hits;
        if (r.last_seen > d.last_seen) d.last_seen = r.last_seen;
      } else daily.set(dk, { day: r.day, bot: r.bot, status: r.status, verification: r.verification, hits: r.hits, last_seen: r.last_seen });
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
    await trx.raw(
      `insert into rm_crawler_url_days (website_id, verification, bot, status, url, days)
       select ?::uuid, v, b, s, u, range_agg(daterange(d, d, '[]'))
       from unnest(?::date[], ?::text[], ?::text[], ?::int[], ?::text[]) as t(d, b, u, s, v)
       group by v, b, s, u
       on conflict (website_id, verification, bot, status, url) do update set days = rm_crawler_url_days.days + excluded.days`,
      [
        e.data.website_id,
        rows.map((r) => r.day),
        rows.map((r) => r.bot),
        rows.map((r) => r.url),
        rows.map((r) => r.status),
        rows.map((r) => r.verification),
      ],
    );
    // per bot and page whatever the status, under its verification and under "all": the per-bot read counts rows, no distinct
    await trx.raw(
      `insert into rm_crawler_bot_pages (website_id, verification, bot, url, days)
       select ?::uuid, v, b, u, range_agg(daterange(d, d, '[]'))
       from unnest(?::date[], ?::text[], ?::text[], ?::text[]) as t(d, b, u, v0), unnest(array[v0, 'all']) as v
       group by v, b, u
       on conflict (website_id, verification, bot, url) do update set days = rm_crawler_bot_pages.days + excluded.days`,
      [e.data.website_id, rows.map((r) => r.day), rows.map((r) => r.bot), rows.map((r) => r.url), rows.map((r) => r.verification)],
    );
  },
};

/**
 * AI crawler hits per (website, day, bot, page, status, verification), summed as batches of log lines arrive, with
 * rollups for long periods: hits per day (no page) and, per page, the days it was crawled as one multirange.
 */
export const crawlersProjection = handlerProjection(
  {
    name: 'crawlers',
    version: 3,
    tables: ['rm_crawler_hits', 'rm_crawler_daily', 'rm_crawler_url_days', 'rm_crawler_bot_pages'],
    migrate: migrateSql(`
        drop table if exists rm_crawler_url_months;
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
        -- the days the page was crawled: a page's row answers "crawled in the period?" with one overlap test
        create table if not exists rm_crawler_url_days (
          website_id uuid not null,
          verification text not null,
          bot text not null,
          status int not null,
          url text not null,
          days datemultirange not null,
          primary key (website_id, verification, bot, status, url)
        );
        -- the same without the status, verification also 'all'
        create table if not exists rm_crawler_bot_pages (
          website_id uuid not null,
          verification text not null,
          bot text not null,
          url text not null,
          days datemultirange not null,
          primary key (website_id, verification, bot, url)
        );`),
  },
  handlers,
);
