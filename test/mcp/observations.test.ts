import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { MODEL_IDS } from '../../src/domain/models';
import { buildSite, importAnswers, type Site } from '../support/answers';
import { OBSERVATIONS_REQUEST_FIELDS } from '../support/observations';
import { call, type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { callTool, useMcpWorld } from './support';

let s: TestServer;
let w: World;
let a: Client;
let b: Client;
let site: Site;

const PATH = '/api/v1/attributes/observations';
const TOOL = 'get_attribute_observations';

useMcpWorld(
  async (ctx) => {
    ({
      s,
      w,
      clients: [a, b],
    } = ctx);
    site = await buildSite(s, w.a.key, {
      name: 'Acme',
      competitors: [{ name: 'Globex', url: 'https://globex.example.net' }],
      attributes: [{ name: 'Price' }, { name: 'Support' }],
    });
    const [globex] = site.competitors.map((c) => c.id);
    const [price, support] = site.attributes.map((x) => x.id);
    const responses = [];
    for (let day = 1; day <= 6; day++) {
      for (let k = 0; k < 3; k++) {
        const positive = (day + k) % 2 === 0;
        const magnitude = [null, 0.2, 0.8, 1][(day * 3 + k) % 4];
        responses.push({
          prompt_id: site.prompts[0].id,
          model: MODEL_IDS[k],
          run_at: `2025-03-0${day}T${String(6 + k * 7).padStart(2, '0')}:15:30.250Z`,
          text: `Answer ${day}.${k}`,
          observations: [
            {
              entity_id: k === 1 ? globex : site.id,
              attribute_id: k === 2 ? support : price,
              positive,
              score: magnitude === null ? null : positive ? magnitude : -magnitude,
              text_span: `span ${day}.${k}`,
            },
          ],
        });
      }
    }
    await importAnswers(s, w.a.key, site.id, responses);
  },
  undefined,
  sharedServer,
);

async function ok(client: Client, args: Record<string, unknown>) {
  const r = await callTool(client, TOOL, args);
  expect(r.isError, r.text).toBe(false);
  expect(JSON.parse(r.text)).toEqual(r.structured);
  return r.structured;
}

const rest = async (body: Record<string, unknown>) => {
  const r = await call(s, 'POST', PATH, { key: w.a.key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};

describe('get_attribute_observations', () => {
  it('given the same request as REST, then the same answer, for both sorts, filters and pages', async () => {
    const globex = site.competitors[0].id;
    const requests: Record<string, unknown>[] = [
      { filters: { start_date: '2025-01-01T00:00:00Z' } },
      { filters: { start_date: '2025-03-02T00:00:00Z', end_date: '2025-03-05T12:00:00Z' }, sort: 'recent' },
      { filters: { start_date: '2025-01-01T00:00:00Z', models: [MODEL_IDS[0], MODEL_IDS[1]] }, entity_ids: [site.id, globex], positive: true },
      { filters: { start_date: '2025-01-01T00:00:00Z', schedule_id: 'manual' }, attribute_ids: [site.attributes[0].id], page_size: 3, page_num: 1 },
    ];
    for (const req of requests) {
      const body = { website_id: site.id, ...req };
      const viaRest = await rest(body);
      expect(viaRest.data.length).toBeGreaterThan(0);
      expect(await ok(a, body)).toEqual(viaRest);
    }
  });

  it('given plain and spelled-out dates, then a date start is midnight and a date end covers its whole day (REST needs date-times)', async () => {
    const expected = await rest({
      website_id: site.id,
      filters: { start_date: '2025-03-02T00:00:00Z', end_date: '2025-03-04T23:59:59.999Z' },
      sort: 'recent',
      page_size: 100,
    });
    expect(expected.data.map((o: { created_at: string }) => o.created_at)).toContain('2025-03-04T20:15:30Z');
    expect(
      await ok(a, { website_id: site.id, filters: { start_date: '2025-03-02', end_date: '2025-03-04' }, sort: 'recent', page_size: 100 }),
    ).toEqual(expected);
    expect(
      await ok(a, { website_id: site.id, filters: { start_date: 'March 2, 2025', end_date: '4 March 2025' }, sort: 'recent', page_size: 100 }),
    ).toEqual(expected);
    expect(
      await ok(a, { website_id: site.id, filters: { start_date: '2025-03-02T00:00:00', end_date: 'Mar 4 2025' }, sort: 'recent', page_size: 100 }),
    ).toEqual(expected);
    const plain = await call(s, 'POST', PATH, { key: w.a.key, body: { website_id: site.id, filters: { start_date: '2025-03-02' } } });
    expect(plain.status).toBe(400);
    expect(plain.body.error).toMatch(/^filters\.start_date: /);
  });

  it('given bad input, then the tool refuses with REST messages and statuses', async () => {
    const refused = async (client: Client, args: Record<string, unknown>, status: number, text: string | RegExp) => {
      const r = await callTool(client, TOOL, args);
      expect(r.isError).toBe(true);
      expect(r.structured.status).toBe(status);
      if (typeof text === 'string') expect(r.text).toBe(text);
      else expect(r.text).toMatch(text);
    };
    const f = { start_date: '2025-01-01' };
    await refused(a, { website_id: site.id, filters: {} }, 400, 'filters.start_date is required');
    await refused(a, { website_id: site.id }, 400, 'filters is required');
    await refused(
      a,
      { website_id: site.id, filters: { ...f, competitor_ids: [site.competitors[0].id] } },
      400,
      'filters.competitor_ids is not allowed',
    );
    await refused(a, { website_id: site.id, filters: { ...f, unknown: 1 } }, 400, 'filters.unknown is not allowed');
    await refused(
      a,
      { website_id: site.id, filters: { start_date: 'last week' } },
      400,
      /^filters\.start_date: relative date "last week" is not accepted/,
    );
    await refused(a, { website_id: site.id, filters: { start_date: '2025-03' } }, 400, /^filters\.start_date: incomplete date/);
    await refused(
      a,
      { website_id: site.id, filters: { start_date: '2025-03-05', end_date: 'March 4, 2025' } },
      400,
      /^filters\.end_date: is before start_date/,
    );
    await refused(a, { website_id: site.id, filters: f, page_size: 101 }, 400, 'page_size: must be between 1 and 100');
    await refused(
      a,
      { website_id: site.id, filters: f, entity_ids: Array.from({ length: 101 }, () => site.id) },
      400,
      'entity_ids: must have at most 100 items',
    );
    await refused(a, { website_id: site.id, filters: f, entity_ids: ['nope'] }, 400, 'entity_ids[0]: must be a UUID');
    await refused(
      a,
      { website_id: site.id, filters: f, entity_ids: [site.id, w.a.a1] },
      400,
      "entity_ids[1]: not the website_id or one of its competitors' ids",
    );
    await refused(a, { website_id: site.id, filters: { ...f, saved_view_id: '00000000-0000-4000-8000-000000000000' } }, 404, 'Saved view not found');
    await refused(a, { website_id: '00000000-0000-4000-8000-000000000000', filters: f }, 404, 'Website not found');
    await refused(b, { website_id: site.id, filters: f }, 403, 'Unauthorized access to this website');
  });

  it('given tools/list, then the tool is offered with its input schema', async () => {
    const { tools } = await a.listTools();
    const t = tools.find((x) => x.name === TOOL)!;
    expect(t).toBeDefined();
    expect(Object.keys(t.inputSchema.properties ?? {}).sort()).toEqual(OBSERVATIONS_REQUEST_FIELDS);
    expect(t.inputSchema.required).toEqual(expect.arrayContaining(['website_id', 'filters']));
  });
});
