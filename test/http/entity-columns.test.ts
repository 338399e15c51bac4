import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factsCache } from '../../queries/metrics/metrics';
import { OUT_OF_LINE_MESSAGE } from '../../queries/metrics/facts/cache';
import { outOfLine } from '../../projections/site-entities';
import { provisionWebsite } from '../../commands/websites/provision-website';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { isDomainError } from '../../src/domain/errors';
import { stepwise } from '../support/stepwise';
import { call, caughtUp, startServer, type TestServer } from '../support/server';

/**
 * The metric facts are stored column by column, one column per tracked entity, in the order of the website's entity
 * list (brand first, then competitors in the order they were added). Every way a website and its competitors come to
 * be, and every way its facts are written again, must keep the columns where the reads look for them: these
 * answers give the brand Zentro a mention rate of 50 % and Acme 100 % (share of voice 1/3 and 2/3), however the
 * website was made.
 */
const TWO_ANSWERS = ['Zentro and Acme are both good.', 'Acme is best.'];
const EXPECTED = { mention_rate: { Zentro: 50, Acme: 100 }, share_of_voice: { Zentro: 33.3333, Acme: 66.6667 } };

let s: TestServer;
let key: string;
let organization: string;

beforeAll(async () => {
  s = await startServer();
  ({ key, organization_id: organization } = await s.org('Columns'));
});
afterAll(async () => s?.close());

let n = 0;
const host = (name: string) => `https://${name.toLowerCase()}-${++n}.example.com`;

/** A website made with POST /websites/provision (its competitors are appended before the website itself). */
async function provisioned(competitors: string[] = ['Acme']) {
  const r = await call(s, 'POST', '/api/v1/websites/provision', {
    key,
    body: {
      name: 'Zentro',
      url: host('zentro'),
      competitors: competitors.map((c) => ({ name: c, url: host(c) })),
      topics: [{ name: 'T', prompts: [{ text: 'best tool?' }] }],
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return {
    site: r.body.website.id as string,
    prompt: r.body.topics[0].prompts[0].id as string,
    competitors: r.body.competitors as { id: string; name: string }[],
  };
}

/** The same through POST /websites, /competitors and /prompts. */
async function created(competitors: string[] = ['Acme']) {
  const w = await call(s, 'POST', '/api/v1/websites', { key, body: { name: 'Zentro', url: host('zentro') } });
  expect(w.status).toBe(201);
  const site = w.body.website.id as string;
  const list: { id: string; name: string }[] = [];
  for (const c of competitors) {
    const r = await call(s, 'POST', '/api/v1/competitors', { key, body: { website_id: site, name: c, url: host(c) } });
    expect(r.status).toBe(201);
    list.push(r.body.competitor);
  }
  const p = await call(s, 'POST', '/api/v1/prompts', { key, body: { website_id: site, text: 'best tool?' } });
  expect(p.status).toBe(201);
  return { site, prompt: p.body.prompt.id as string, competitors: list };
}

async function imported(site: string, prompt: string, texts: string[], day = '2026-03-01') {
  const r = await call(s, 'POST', '/api/v1/responses/import', {
    key,
    body: {
      website_id: site,
      responses: texts.map((text, i) => ({ prompt_id: prompt, model: 'chatgpt', run_at: `${day}T0${i % 10}:00:00Z`, text, citations: [] })),
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

/**
 * Mention rate and share of voice per entity name, as served (never flagged stale: the read models have caught up).
 * Unless told otherwise, first checks that the stored facts are in line as written (site row and every chunk laid
 * out for the website's list): right numbers must not depend on the read path setting them right.
 */
async function rates(site: string, server: { url: string } = s, inLine = true) {
  if (inLine) {
    expect(await outOfLine(s.rt.database.db, site)).toBeNull();
    expect((await readyz()).sites_out_of_line).toEqual([]);
  }
  const get = async (family: string, field: string) => {
    const r = await call(server, 'POST', `/api/v1/metrics/${family}/cumulative`, { key, body: { website_id: site } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.stale).toBeUndefined();
    return Object.fromEntries(Object.entries(r.body.data as Record<string, Record<string, number>>).map(([k, v]) => [k, v[field]]));
  };
  return { mention_rate: await get('mention-rate', 'mention_rate'), share_of_voice: await get('share-of-voice', 'share_of_voice') };
}

const readyz = async () => (await call(s, 'GET', '/readyz')).body;

describe('the entity columns of a website made either way', () => {
  it('given a provisioned website (brand Zentro, competitor Acme), when two answers are imported, then Zentro has 50 % and Acme 100 %', async () => {
    const { site, prompt } = await provisioned();
    await imported(site, prompt, TWO_ANSWERS);
    expect(await rates(site)).toEqual(EXPECTED);
  });

  it('given a website provisioned while the read model applies each append on its own (the catalogue before the website), when the answers are imported, then the same numbers', async () => {
    const r = await provisionWebsite(
      { store: stepwise(s.rt).store, organizationId: organization, actor: SYSTEM_ACTOR },
      {
        name: 'Zentro',
        url: host('zentro'),
        competitors: [{ name: 'Acme', url: host('acme') }],
        topics: [{ name: 'T', prompts: [{ text: 'best tool?' }] }],
      },
    );
    if (isDomainError(r)) throw new Error(r.message);
    await caughtUp(s, ['answers', 'catalog', 'websites']);
    await imported(r.result.website.id, r.result.topics[0].prompts[0].id, TWO_ANSWERS);
    expect(await rates(r.result.website.id)).toEqual(EXPECTED);
  });

  it('given a website created and then given its competitor, when the same answers are imported, then the same numbers', async () => {
    const { site, prompt } = await created();
    await imported(site, prompt, TWO_ANSWERS);
    expect(await rates(site)).toEqual(EXPECTED);
  });

  it('given a provisioned website with its answers, when competitors are added, renamed and removed, then every step counts each entity in its own column', async () => {
    const { site, prompt, competitors } = await provisioned();
    await imported(site, prompt, [...TWO_ANSWERS, 'Brio and Acme.']);
    expect(await rates(site)).toEqual({ mention_rate: { Zentro: 33.3333, Acme: 100 }, share_of_voice: { Zentro: 25, Acme: 75 } });

    const brio = await call(s, 'POST', '/api/v1/competitors', { key, body: { website_id: site, name: 'Brio', url: host('brio') } });
    expect(brio.status).toBe(201);
    await caughtUp(s, ['answers']);
    expect(await rates(site)).toEqual({
      mention_rate: { Zentro: 33.3333, Acme: 100, Brio: 33.3333 },
      share_of_voice: { Zentro: 20, Acme: 60, Brio: 20 },
    });

    const acme = competitors[0].id;
    expect((await call(s, 'PATCH', `/api/v1/competitors/${acme}`, { key, body: { website_id: site, name: 'Globex' } })).status).toBe(200);
    await caughtUp(s, ['answers']);
    expect(await rates(site)).toEqual({
      mention_rate: { Zentro: 33.3333, Globex: 0, Brio: 33.3333 },
      share_of_voice: { Zentro: 50, Globex: 0, Brio: 50 },
    });

    expect((await call(s, 'DELETE', `/api/v1/competitors/${brio.body.competitor.id}`, { key, query: { website_id: site } })).status).toBe(200);
    await caughtUp(s, ['answers']);
    expect(await rates(site)).toEqual({ mention_rate: { Zentro: 33.3333, Globex: 0 }, share_of_voice: { Zentro: 100, Globex: 0 } });

    // and a new answer after the changes lands in the columns of the list as it is now
    await imported(site, prompt, ['Globex beats Zentro.'], '2026-03-02');
    expect(await rates(site)).toEqual({ mention_rate: { Zentro: 50, Globex: 25 }, share_of_voice: { Zentro: 66.6667, Globex: 33.3333 } });
  });

  it('given provisioned and created websites with answers, when the answers read model is rebuilt, and when a new instance reads them with a cold cache, then the numbers are the same', async () => {
    const a = await provisioned(['Acme', 'Brio']);
    const b = await created(['Acme', 'Brio']);
    for (const x of [a, b]) await imported(x.site, x.prompt, [...TWO_ANSWERS, 'Brio, then Zentro.']);
    const expected = { mention_rate: { Zentro: 66.6667, Acme: 66.6667, Brio: 33.3333 }, share_of_voice: { Zentro: 40, Acme: 40, Brio: 20 } };
    expect(await rates(a.site)).toEqual(expected);
    expect(await rates(b.site)).toEqual(expected);

    await s.rt.runners.get('answers')!.rebuild();
    expect(await rates(a.site)).toEqual(expected);
    expect(await rates(b.site)).toEqual(expected);

    const cold = await startServer({}, {}, s);
    try {
      expect(await rates(a.site, cold)).toEqual(expected);
      expect(await rates(b.site, cold)).toEqual(expected);
    } finally {
      await cold.close();
    }
  });
});

describe('facts out of line with their website', () => {
  const db = () => s.rt.database.db;

  it('given a site row that lacks the brand (as provisioning used to leave it), then /readyz names the website, and its metrics are derived again before they are served', async () => {
    const { site, prompt, competitors } = await provisioned();
    await imported(site, prompt, TWO_ANSWERS);
    expect(await rates(site)).toEqual(EXPECTED);
    // written as any writer writes: with a new version
    await db().raw(`update rm_fact_sites set entities = ?::jsonb, version = nextval('rm_fact_version') where website_id = ?`, [
      JSON.stringify([competitors[0].id]),
      site,
    ]);

    const before = await readyz();
    expect(before.status).toBe('degraded');
    expect(before.sites_out_of_line).toEqual([
      { website_id: site, detail: `the site row lists [${competitors[0].id}], the website has [${site}, ${competitors[0].id}]` },
    ]);

    expect(await rates(site, s, false)).toEqual(EXPECTED);
    const after = await readyz();
    expect(after.sites_out_of_line).toEqual([]);
    expect(after.status).toBe('ready');
  });

  it('given a stored chunk laid out for the entities in another order, then the read does not serve shifted columns: it derives the website again', async () => {
    const { site, prompt, competitors } = await provisioned();
    await imported(site, prompt, TWO_ANSWERS);
    expect(await rates(site)).toEqual(EXPECTED);
    // the chunk says its columns are Acme then Zentro (the data is unchanged): read as laid out, the numbers would swap
    await shiftChunks(site, [competitors[0].id, site]);
    expect(await rates(site, s, false)).toEqual(EXPECTED);
    expect((await readyz()).sites_out_of_line).toEqual([]);
  });

  it('given a website out of line that cannot be derived again, then its metrics answer 503 with a clear message, /readyz names it, and once derivable it is served again', async () => {
    const { site, prompt, competitors } = await provisioned();
    await imported(site, prompt, TWO_ANSWERS);
    expect(await rates(site)).toEqual(EXPECTED);
    const cache = factsCache(db());
    const { realign, log } = cache;
    cache.realign = async () => {
      throw new Error('the database refused the re-derivation');
    };
    const lines: { level: number; msg: string; website_id?: string; detail?: string }[] = [];
    cache.log = pino(
      { level: 'warn' },
      new Writable({
        write: (chunk, _enc, cb) => (
          lines.push(
            ...chunk
              .toString()
              .trim()
              .split('\n')
              .map((l: string) => JSON.parse(l)),
          ),
          cb()
        ),
      }),
    );
    try {
      await shiftChunks(site, [competitors[0].id, site]);
      for (const family of ['mention-rate', 'share-of-voice', 'citation-rate', 'position']) {
        const r = await call(s, 'POST', `/api/v1/metrics/${family}/cumulative`, { key, body: { website_id: site } });
        expect(r.status, family).toBe(503);
        expect(r.body).toEqual({ error: OUT_OF_LINE_MESSAGE });
        expect(r.headers.get('retry-after')).toBe('5');
      }
      const series = await call(s, 'POST', '/api/v1/metrics/mention-rate/time-series', { key, body: { website_id: site } });
      expect(series.status).toBe(503);
      const rows = await call(s, 'POST', '/api/v1/looker-studio/data', { key, body: { website_id: site } });
      expect(rows.status).toBe(503);
      const health = await readyz();
      expect(health.status).toBe('degraded');
      expect(health.sites_out_of_line).toEqual([
        { website_id: site, detail: `facts laid out for [${competitors[0].id}, ${site}], the website has [${site}, ${competitors[0].id}]` },
      ]);
      // and the log says which website, what differs, and that it was refused
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 50,
          website_id: site,
          detail: expect.stringContaining(`laid out for [${competitors[0].id}, ${site}]`),
          msg: expect.stringContaining('refusing to serve them'),
        }),
      );
    } finally {
      cache.realign = realign;
      cache.log = log;
    }
    expect(await rates(site, s, false)).toEqual(EXPECTED);
    expect((await readyz()).sites_out_of_line).toEqual([]);
  });

  /** Rewrites the entity list of the website's stored chunks (not their data) as a newer write, so that readers load them. */
  async function shiftChunks(site: string, entities: string[]) {
    await db().raw(
      `with v as (select nextval('rm_fact_version') as v)
       update rm_fact_chunks set meta = jsonb_set(meta, '{entities}', ?::jsonb), version = (select v from v) where website_id = ?`,
      [JSON.stringify(entities), site],
    );
    await db().raw(`update rm_fact_sites set version = (select max(version) from rm_fact_chunks where website_id = ?) where website_id = ?`, [
      site,
      site,
    ]);
  }
});
