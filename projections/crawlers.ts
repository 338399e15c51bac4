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
    // the reads hold a website's hits in memory while this is the version they loaded
    await trx.raw(
      `insert into rm_crawler_sites (website_id, version) values (?, nextval('rm_crawler_version'))
       on conflict (website_id) do update set version = excluded.version`,
      [e.data.website_id],
    );
  },
};

/**
 * AI crawler hits per (website, day, bot, page, status, verification), summed as batches of log lines arrive, and per
 * website the version of its hits (queries/crawlers/hits-index.ts holds them in memory at a version).
 */
export const crawlersProjection = handlerProjection(
  {
    name: 'crawlers',
    version: 4,
    tables: ['rm_crawler_hits', 'rm_crawler_sites'],
    migrate: migrateSql(`
        drop table if exists rm_crawler_url_months, rm_crawler_daily, rm_crawler_url_days, rm_crawler_bot_pages;
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
        create table if not exists rm_crawler_sites (
          website_id uuid primary key,
          version bigint not null
        );
        create sequence if not exists rm_crawler_version;`),
  },
  handlers,
);
