import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { MODEL_IDS, SHOPPING_MODEL_IDS, isShoppingModelId } from '../../src/domain/models';
import { SHOPPING_NOT_ENABLED } from '../../src/app/shopping';
import { call, type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { apiKey, bearer, callTool, itRefusesOthersAndUnfeatured, useMcpWorld } from './support';
import { postCreated } from '../support/http';

let s: TestServer;
let w: World;
let a: Client;
let b: Client;
let site: string;
let competitor: string;

const [SM0, SM1] = SHOPPING_MODEL_IDS;
const OTHER_MODEL = MODEL_IDS.find((m) => !isShoppingModelId(m))!;

const rest = (body: Record<string, unknown>, key = w.a.key) => call(s, 'POST', '/api/v1/metrics/shopping', { key, body });

useMcpWorld(
  async (ctx) => {
    ({
      s,
      w,
      clients: [a, b],
    } = ctx);
    const post = (path: string, body: unknown) => postCreated(s, w.a.key, path, body);
    site = (await post('/api/v1/websites', { name: 'Acme', url: 'https://acme-mcp.example.com' })).website.id;
    competitor = (await post('/api/v1/competitors', { website_id: site, name: 'Globex', url: 'https://globex.example.net' })).competitor.id;
    const prompt = (await post('/api/v1/prompts', { website_id: site, text: 'Best headphones?', tags: ['audio'] })).prompt.id;
    const card = (name: string, brand: string, position: number, price: number, merchant: string) => ({
      name,
      brand,
      position,
      price,
      currency: 'USD',
      merchant,
    });
    await post('/api/v1/responses/import', {
      website_id: site,
      responses: [
        {
          prompt_id: prompt,
          model: SM0,
          run_at: '2026-03-01T10:00:00Z',
          text: 'Options.',
          products: [card('Acme Pro', 'Acme', 1, 100, 'Amazon'), card('Globex X', 'Globex', 2, 80, 'Walmart')],
        },
        { prompt_id: prompt, model: SM1, run_at: '2026-03-02T10:00:00Z', text: 'Options.', products: [card('Globex X', 'Globex', 1, 90, 'Amazon')] },
        { prompt_id: prompt, model: SM1, run_at: '2026-03-03T10:00:00Z', text: 'Nothing to buy.' },
      ],
    });
  },
  (w) => [apiKey(w.a.key), bearer(w.b.key)],
  sharedServer,
);

describe('get_shopping_metrics', () => {
  it('given the same input, when called as a tool and over REST, then both answer the same body', async () => {
    const inputs: Record<string, unknown>[] = [
      { website_id: site },
      { website_id: site, top_products_limit: 1 },
      {
        website_id: site,
        filters: { models: [SM1], competitor_ids: [competitor], prompt_tags: ['audio'], prompt_tags_operator: 'all', target_identifiers: ['pro'] },
      },
      { website_id: site, filters: { schedule_id: 'default', start_date: '2026-03-02', end_date: '2026-03-03' } },
    ];
    for (const input of inputs) {
      const tool = await callTool(a, 'get_shopping_metrics', input);
      expect(tool.isError, tool.text).toBe(false);
      const r = await rest(input);
      expect(r.status).toBe(200);
      expect(tool.structured).toEqual(r.body);
      expect(JSON.parse(tool.text)).toEqual(r.body);
    }
    const all = (await rest({ website_id: site })).body;
    expect(all.summary).toMatchObject({
      answers: 3,
      answers_with_products: 2,
      answers_with_own_products: 1,
      product_visibility_rate: 33.33,
      own_product_appearances: 1,
      competitor_product_appearances: 2,
    });
  });

  it('given spelled-out dates, then the tool reads them as whole UTC days, like REST plain dates', async () => {
    const tool = await callTool(a, 'get_shopping_metrics', { website_id: site, filters: { start_date: 'March 2, 2026', end_date: '3 March 2026' } });
    expect(tool.isError, tool.text).toBe(false);
    const r = await rest({ website_id: site, filters: { start_date: '2026-03-02', end_date: '2026-03-03' } });
    expect(tool.structured).toEqual(r.body);
    expect(r.body.summary.answers).toBe(2);
  });

  it('given refused input, then the tool answers with REST’s messages', async () => {
    const cases: [Record<string, unknown>, number, string | RegExp][] = [
      [{ website_id: site, filters: { prompt_ids: [site] } }, 400, 'filters.prompt_ids is not allowed'],
      [{ website_id: site, filters: { location_ids: [site] } }, 400, 'filters.location_ids is not allowed'],
      [{ website_id: site, filters: { models: [OTHER_MODEL] } }, 400, /^filters\.models\[0\]: model ".+" is not available on the shopping endpoint/],
      [{ website_id: site, filters: { start_date: 'last week' } }, 400, /^filters\.start_date: relative date "last week" is not accepted/],
      [
        { website_id: site, filters: { start_date: '2026-03-03', end_date: '2026-03-02' } },
        400,
        'filters.end_date: is before start_date (2026-03-03)',
      ],
      [{ website_id: site, top_products_limit: 51 }, 400, 'top_products_limit: must be between 1 and 50'],
      [
        { website_id: site, filters: { competitor_ids: ['00000000-0000-4000-8000-000000000000'] } },
        400,
        'filters.competitor_ids[0]: no competitor of this website has this id',
      ],
      [{ website_id: '00000000-0000-4000-8000-000000000000' }, 404, 'Website not found'],
    ];
    for (const [input, status, error] of cases) {
      const tool = await callTool(a, 'get_shopping_metrics', input);
      expect(tool.isError, JSON.stringify(input)).toBe(true);
      expect(tool.structured.status).toBe(status);
      if (typeof error === 'string') expect(tool.text).toBe(error);
      else expect(tool.text).toMatch(error);
      // REST refuses the same way (its own date rule aside)
      if (!JSON.stringify(input).includes('last week')) {
        const r = await rest(input);
        expect(r.status).toBe(status);
        expect(r.body.error).toBe(tool.text);
      }
    }
  });

  itRefusesOthersAndUnfeatured(() => ({ s, other: b, site }), 'get_shopping_metrics', {
    about: 'the shopping feature',
    organization: 'No shopping',
    message: SHOPPING_NOT_ENABLED,
  });

  it('given the tool listing, then get_shopping_metrics takes exactly the eight filter keys', async () => {
    const { tools } = await a.listTools();
    const t = tools.find((x) => x.name === 'get_shopping_metrics')!;
    expect(t).toBeDefined();
    const filters = (t.inputSchema.properties as any).filters;
    expect(Object.keys(filters.properties).sort()).toEqual(
      ['competitor_ids', 'end_date', 'models', 'prompt_tags', 'prompt_tags_operator', 'schedule_id', 'start_date', 'target_identifiers'].sort(),
    );
    expect(filters.additionalProperties).toBe(false);
  });
});
