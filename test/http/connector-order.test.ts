import { describe, expect, it } from 'vitest';
import { buildSite, importAnswers, type Site } from '../support/answers';
import { call, startServer, type TestServer, useServer } from '../support/server';

/**
 * The reporting connector pages its rows in a total order that does not depend on where or when they are computed:
 * date, model, prompt id, location id (none first), then the entities as listed (brand first, then competitors in
 * the order they were added). The answers below are imported so that the order in which each process meets prompts,
 * models and locations differs between a process that watched them arrive, a cold one, and one after a rebuild.
 */
let s: TestServer;
let key: string;
let site: Site;
const MODELS = ['gemini', 'claude', 'chatgpt'];
const NAMES = ['Zentro', 'Acme', 'Brio'];

interface Answer {
  day: string;
  model: string;
  prompt_id: string;
  location_id: string | null;
  /** which of NAMES it mentions */
  mentions: boolean[];
}

const answers: Answer[] = [];
let seq = 0;

/** Answers of one day for every model, prompt and location, in the order given (one or two each, `extra` more); the k-th mentions a pattern of k. */
function dayOf(day: string, prompts: string[], models: string[], locations: (string | null)[], extra = 0): Answer[] {
  const out: Answer[] = [];
  for (const model of models)
    for (const prompt_id of prompts)
      for (const location_id of locations) {
        const times = 1 + (out.length % 2) + extra;
        for (let r = 0; r < times; r++) {
          const k = seq++;
          out.push({ day, model, prompt_id, location_id, mentions: NAMES.map((_, j) => ((k * 5 + 3) >> j) % 2 === 1) });
        }
      }
  return out;
}

async function imported(list: Answer[]) {
  await importAnswers(
    s,
    key,
    site.id,
    list.map((a, i) => ({
      prompt_id: a.prompt_id,
      model: a.model,
      location_id: a.location_id,
      run_at: `${a.day}T${String(Math.floor(i / 60) % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00Z`,
      text: `${NAMES.filter((_, j) => a.mentions[j]).join(' and ') || 'Nobody'} came up.`,
      citations: [],
    })),
  );
  answers.push(...list);
}

type Row = { date: string; model: string; prompt_id: string; location_id: string | null; entity_id: string; responses: number; mentions: number };

/** Every page of the connector's rows at `size`, checked to be full but the last. */
async function pages(server: { url: string }, size: number): Promise<Row[][]> {
  const out: Row[][] = [];
  for (let page_num = 0; ; page_num++) {
    const r = await call(server, 'POST', '/api/v1/looker-studio/data', { key, body: { website_id: site.id, page_num, page_size: size } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(r.body.rows);
    if (!r.body.has_more) break;
    expect(r.body.rows).toHaveLength(size);
  }
  return out;
}

useServer(async (server) => {
  s = server;
  key = (await s.org('Connector')).key;
  site = await buildSite(s, key, {
    name: 'Zentro',
    url: 'https://zentro-connector.example.com',
    competitors: [
      { name: 'Acme', url: 'https://acme-connector.example.net' },
      { name: 'Brio', url: 'https://brio-connector.example.org' },
    ],
    prompts: [{ text: 'p1' }, { text: 'p2' }, { text: 'p3' }],
    locations: [
      { location: 'L1', country: 'France' },
      { location: 'L2', country: 'Spain' },
    ],
  });
  const prompts = site.prompts.map((p) => p.id);
  const locations: (string | null)[] = [null, ...site.locations.map((l) => l.id)];
  // the second day first, everything in reverse; the server reads it before the other days exist
  await imported(dayOf('2026-03-02', [...prompts].reverse(), MODELS, [...locations].reverse()));
  expect((await pages(s, 10_000)).flat().length).toBeGreaterThan(0);
  await imported(dayOf('2026-03-01', prompts, [...MODELS].reverse(), locations));
  await imported(dayOf('2026-03-03', [prompts[1], prompts[2], prompts[0]], [MODELS[1], MODELS[0]], [locations[2], locations[0]]));
  // the second day's stored part is written again (it moves behind the others in the table)
  await imported(dayOf('2026-03-02', [prompts[0]], [MODELS[2]], [locations[1]], 1));
});

describe('reporting connector paging', () => {
  it('given answers over three days, then the pages cover every (day, model, prompt, location, entity) exactly once, in the documented order, with counts of answers', async () => {
    const rows = (await pages(s, 7)).flat();
    // what the imported answers give, computed from them
    const groups = new Map<string, Answer[]>();
    for (const a of answers) {
      const k = [a.day, a.model, a.prompt_id, a.location_id ?? ''].join('|');
      groups.set(k, [...(groups.get(k) ?? []), a]);
    }
    const entityIds = [site.id, ...site.competitors.map((c) => c.id)];
    const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const tuple = (k: string) => k.split('|');
    const order = (a: string, b: string) => tuple(a).reduce((c, x, i) => c || byCodeUnits(x, tuple(b)[i]), 0);
    const expected: Row[] = [...groups.keys()].sort(order).flatMap((k) => {
      const list = groups.get(k)!;
      const [day, model, prompt_id, location] = k.split('|');
      return entityIds.map((entity_id, j) => ({
        date: day,
        model,
        prompt_id,
        location_id: location || null,
        entity_id,
        responses: list.length,
        mentions: list.filter((a) => a.mentions[j]).length,
      }));
    });
    expect(
      rows.map((r) => ({
        date: r.date,
        model: r.model,
        prompt_id: r.prompt_id,
        location_id: r.location_id,
        entity_id: r.entity_id,
        responses: r.responses,
        mentions: r.mentions,
      })),
    ).toEqual(expected);
    expect(new Set(rows.map((r) => [r.date, r.model, r.prompt_id, r.location_id, r.entity_id].join('|'))).size).toBe(rows.length);
  });

  it('given the same data, then the pages are the same on the instance that watched it arrive, on a cold instance, and after each of two rebuilds', async () => {
    const warm = await pages(s, 50);
    const first = await pages(s, 10_000);
    expect(first.flat()).toEqual(warm.flat());

    const cold = await startServer({}, {}, s);
    try {
      expect(await pages(cold, 50)).toEqual(warm);
      for (let i = 0; i < 2; i++) {
        await s.rt.runners.get('answers')!.rebuild();
        expect(await pages(s, 50), `rebuild ${i + 1}`).toEqual(warm);
        expect(await pages(cold, 50), `rebuild ${i + 1}, the other instance`).toEqual(warm);
      }
    } finally {
      await cold.close();
    }
    const after = await startServer({}, {}, s);
    try {
      expect(await pages(after, 50)).toEqual(warm);
    } finally {
      await after.close();
    }
  });
});
